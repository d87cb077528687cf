import FoundationEssentials

/// Why a configuration file could not be loaded (or, for unknown keys, a warning about it). `description` is the
/// one-line message shown to operators.
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

    /// Whether this is a non-fatal finding (an unknown key) rather than a reason to refuse the file.
    public var isWarning: Bool { kind == .unknownKey }

    /// One line, always: line breaks inside quoted values or paths are shown as `\n`.
    public var description: String {
        var prefix = isWarning ? "config warning" : "config error"
        if let file { prefix += " in \(file)" }
        if let mark { prefix += " at \(mark)" }
        let message: String
        switch kind {
        case .unreadable(let path, let reason): message = "config error: cannot read \(path): \(reason)"
        case .syntax(let problem): message = "\(prefix): invalid YAML: \(problem)"
        case .missingKey: message = "\(prefix): missing required key '\(key)'"
        case .missingSecret(let variable): message = "\(prefix): missing required key '\(key)' (or set \(variable))"
        case .wrongType(let expected): message = "\(prefix): '\(key)': expected \(expected)"
        case .invalidValue(let reason): message = "\(prefix): '\(key)': \(reason)"
        case .unknownKey: message = "\(prefix): unknown key '\(key)' (ignored)"
        }
        // By scalar: "\r\n" is one Character, which a Character-wise replacement of "\r" or "\n" would not match.
        var oneLine = ""
        for scalar in message.unicodeScalars {
            switch scalar {
            case "\r": oneLine += "\\r"
            case "\n": oneLine += "\\n"
            default: oneLine.unicodeScalars.append(scalar)
            }
        }
        return oneLine
    }
}
