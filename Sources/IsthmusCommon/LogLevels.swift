/// How log lines are written: `text` (logfmt-like, for people) or `json` (one object per line, for log stacks).
public enum LogFormat: String, Sendable, Equatable, CaseIterable {
    case text
    case json
}

/// Log levels by logger label: an entry for a label applies to it and to every label below it in dotted order
/// (`xmpp` covers `xmpp.component` and `xmpp.link`); the longest matching entry wins, else ``default``. Pure value.
public struct LogLevels: Sendable, Equatable {
    public var `default`: Logger.Level
    public var modules: [String: Logger.Level]

    public init(default: Logger.Level, modules: [String: Logger.Level] = [:]) {
        self.default = `default`
        self.modules = modules
    }

    /// The level that applies to `label`.
    public func level(for label: String) -> Logger.Level {
        guard !modules.isEmpty else { return self.default }
        var candidate = Substring(label)
        while true {
            if let level = modules[String(candidate)] { return level }
            guard let dot = candidate.lastIndex(of: ".") else { return self.default }
            candidate = candidate[..<dot]
        }
    }
}
