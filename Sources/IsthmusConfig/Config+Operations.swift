import IsthmusCommon

extension Config {
    /// `logging:` — `level`, `format`, `levels` (label → level) and `file`.
    static func decodeLogging(_ reader: inout ConfigReader, baseDirectory: String) throws(ConfigError) -> Logging {
        let level = try decodeLevel(&reader, "level") ?? .info
        let formatName = try reader.optionalString("format") ?? "text"
        guard let format = LogFormat(rawValue: formatName) else {
            throw reader.invalid("format", "unknown format '\(formatName)' (text or json)")
        }
        var levels: [String: Logger.Level] = [:]
        for entry in try reader.optionalMapping("levels") {
            guard !entry.key.isEmpty, !entry.key.contains(where: \.isWhitespace), !entry.key.hasPrefix("."), !entry.key.hasSuffix(".") else {
                throw ConfigError(.invalidValue(reason: "'\(entry.key)' is not a logger label (e.g. xmpp.component)"),
                                  key: "\(reader.path).levels", mark: entry.keyMark)
            }
            guard case .scalar(let name, _, let mark) = entry.value else {
                throw ConfigError(.wrongType(expected: "a level name"), key: "\(reader.path).levels.\(entry.key)", mark: entry.value.mark)
            }
            guard let level = Logger.Level(name: name) else {
                throw ConfigError(.invalidValue(reason: "unknown level '\(name)' (one of \(levelNames))"),
                                  key: "\(reader.path).levels.\(entry.key)", mark: mark)
            }
            levels[entry.key] = level
        }
        var file: String?
        if let path = try reader.optionalString("file") {
            if path.isEmpty { throw reader.invalid("file", "must not be empty (leave the key out to log to standard error)") }
            file = resolve(path, against: baseDirectory)
        }
        return Logging(level: level, format: format, levels: levels, file: file)
    }

    /// `metrics:` — `listen: HOST:PORT` (absent: no listener).
    static func decodeMetrics(_ reader: inout ConfigReader) throws(ConfigError) -> Metrics {
        guard let text = try reader.optionalString("listen") else { return Metrics(listen: nil) }
        guard let listen = HostPort(text) else {
            throw reader.invalid("listen", "expected host:port, got '\(text)'")
        }
        return Metrics(listen: listen)
    }

    private static func decodeLevel(_ reader: inout ConfigReader, _ key: String) throws(ConfigError) -> Logger.Level? {
        guard let name = try reader.optionalString(key) else { return nil }
        guard let level = Logger.Level(name: name) else {
            throw reader.invalid(key, "unknown level '\(name)' (one of \(levelNames))")
        }
        return level
    }

    private static var levelNames: String { Logger.Level.allCases.map(\.description).joined(separator: ", ") }
}
