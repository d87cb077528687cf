/// Why a configuration file could not be loaded. `description` is the one-line message shown to operators.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The file does not exist or cannot be read.
        case unreadable(path: String, reason: String)
        /// The text is not valid YAML.
        case syntax(problem: String)
        /// A required key is absent.
        case missingKey
        /// A required secret is neither in the file nor in its environment variable.
        case missingSecret(variable: String)
        /// A value has the wrong type or shape (`expected` says what was wanted).
        case wrongType(expected: String)
        /// A value has the right type but is not acceptable.
        case invalidValue(reason: String)
        /// A key the config format does not know (likely a typo).
        case unknownKey
    }

    public var kind: Kind
    /// The dotted key path, e.g. `matrix.server_name` (empty for file-level errors).
    public var key: String
    /// Where in the file, when known.
    public var mark: YAMLNode.Mark?
    /// The config file's path, when loaded from a file.
    public var file: String?

    public init(_ kind: Kind, key: String = "", mark: YAMLNode.Mark? = nil, file: String? = nil) {
        self.kind = kind
        self.key = key
        self.mark = mark
        self.file = file
    }

    public var description: String {
        var prefix = "config error"
        if let file { prefix += " in \(file)" }
        if let mark { prefix += " at \(mark)" }
        switch kind {
        case .unreadable(let path, let reason): return "config error: cannot read \(path): \(reason)"
        case .syntax(let problem): return "\(prefix): invalid YAML: \(problem)"
        case .missingKey: return "\(prefix): missing required key '\(key)'"
        case .missingSecret(let variable): return "\(prefix): missing required key '\(key)' (or set \(variable))"
        case .wrongType(let expected): return "\(prefix): '\(key)': expected \(expected)"
        case .invalidValue(let reason): return "\(prefix): '\(key)': \(reason)"
        case .unknownKey: return "\(prefix): unknown key '\(key)'"
        }
    }
}
