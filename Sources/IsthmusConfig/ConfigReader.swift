import IsthmusCommon
/// Typed, path-tracking access to a YAML mapping, producing ``ConfigError``s that name the key and position.
///
/// Every key read is remembered so that ``unknownKeys()`` can report the others (misspelt keys) as warnings.
struct ConfigReader {
    let path: String
    let entries: [(key: String, keyMark: YAMLNode.Mark, value: YAMLNode)]
    /// Where this mapping is introduced: its key in the parent (`appservice:`), or the document start. Errors about
    /// keys missing from it point here.
    let mark: YAMLNode.Mark
    private var consumed: Set<String> = []

    init(_ node: YAMLNode, path: String, introducedAt keyMark: YAMLNode.Mark? = nil) throws(ConfigError) {
        self.path = path
        switch node {
        case .mapping(let entries, let mark):
            self.entries = entries
            self.mark = keyMark ?? mark
        case .null(let mark):
            self.entries = []
            self.mark = keyMark ?? mark
        default:
            throw ConfigError(.wrongType(expected: "a mapping"), key: path.isEmpty ? "(top level)" : path, mark: node.mark)
        }
    }

    private func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private mutating func node(_ key: String) -> YAMLNode? {
        consumed.insert(key)
        guard let value = entries.first(where: { $0.key == key })?.value else { return nil }
        if case .null = value { return nil }
        if case .scalar(let text, true, _) = value, text.isEmpty || text == "~" || text == "null" { return nil }
        return value
    }

    /// Where `key`'s value starts (or the mapping, when absent).
    func mark(of key: String) -> YAMLNode.Mark {
        entries.first(where: { $0.key == key })?.value.mark ?? mark
    }

    /// A nested mapping; absent → an empty one at this mapping's position.
    mutating func section(_ key: String) throws(ConfigError) -> ConfigReader {
        let keyMark = entries.first(where: { $0.key == key })?.keyMark ?? mark
        guard let value = node(key) else {
            return try ConfigReader(.null(keyMark), path: keyPath(key))
        }
        return try ConfigReader(value, path: keyPath(key), introducedAt: keyMark)
    }

    /// Whether `key` is present with a non-null value.
    func has(_ key: String) -> Bool {
        guard let value = entries.first(where: { $0.key == key })?.value else { return false }
        if case .null = value { return false }
        return true
    }

    mutating func optionalString(_ key: String) throws(ConfigError) -> String? {
        guard let value = node(key) else { return nil }
        guard case .scalar(let text, _, _) = value else {
            throw ConfigError(.wrongType(expected: "a string"), key: keyPath(key), mark: value.mark)
        }
        return text
    }

    mutating func string(_ key: String) throws(ConfigError) -> String {
        guard let text = try optionalString(key) else {
            throw ConfigError(.missingKey, key: keyPath(key), mark: mark)
        }
        guard !text.isEmpty else {
            throw ConfigError(.invalidValue(reason: "must not be empty"), key: keyPath(key), mark: self.mark(of: key))
        }
        return text
    }

    mutating func optionalInt(_ key: String) throws(ConfigError) -> Int? {
        guard let value = node(key) else { return nil }
        guard case .scalar(let text, true, _) = value, let number = Int(text) else {
            throw ConfigError(.wrongType(expected: "an integer"), key: keyPath(key), mark: value.mark)
        }
        return number
    }

    mutating func optionalBool(_ key: String) throws(ConfigError) -> Bool? {
        guard let value = node(key) else { return nil }
        guard case .scalar(let text, true, _) = value else {
            throw ConfigError(.wrongType(expected: "true or false"), key: keyPath(key), mark: value.mark)
        }
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw ConfigError(.wrongType(expected: "true or false"), key: keyPath(key), mark: value.mark)
        }
    }

    /// A sequence of strings; absent → nil.
    /// A list of XMPP domains (MUC services), folded to lower case as JIDs fold them; nil when absent.
    mutating func optionalDomains(_ key: String) throws(ConfigError) -> [String]? {
        guard let domains = try optionalStrings(key) else { return nil }
        guard domains.allSatisfy({ JID(localpart: nil, domain: $0) != nil }) else {
            throw invalid(key, "every entry must be a domain such as conference.example.org")
        }
        return domains.map { $0.lowercased() }
    }

    mutating func optionalStrings(_ key: String) throws(ConfigError) -> [String]? {
        guard let value = node(key) else { return nil }
        guard case .sequence(let items, _) = value else {
            throw ConfigError(.wrongType(expected: "a list of strings"), key: keyPath(key), mark: value.mark)
        }
        var strings: [String] = []
        for item in items {
            guard case .scalar(let text, _, _) = item, !text.isEmpty else {
                throw ConfigError(.wrongType(expected: "a string"), key: keyPath(key), mark: item.mark)
            }
            strings.append(text)
        }
        return strings
    }

    /// A nested mapping's entries as they are (for maps with free keys, such as `logging.levels`); absent → empty.
    mutating func optionalMapping(_ key: String) throws(ConfigError) -> [(key: String, keyMark: YAMLNode.Mark, value: YAMLNode)] {
        guard let value = node(key) else { return [] }
        guard case .mapping(let entries, _) = value else {
            throw ConfigError(.wrongType(expected: "a mapping"), key: keyPath(key), mark: value.mark)
        }
        return entries
    }

    /// An error about `key`'s value, positioned at it.
    func invalid(_ key: String, _ reason: String) -> ConfigError {
        ConfigError(.invalidValue(reason: reason), key: keyPath(key), mark: mark(of: key))
    }

    /// Keys that were never read: typos, or keys of another version. Reported as warnings, not errors,
    /// so files written by newer tools still load.
    func unknownKeys() -> [ConfigError] {
        entries.filter { !consumed.contains($0.key) }.map {
            ConfigError(.unknownKey, key: keyPath($0.key), mark: $0.keyMark)
        }
    }
}
