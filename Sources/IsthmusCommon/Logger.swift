import FoundationEssentials

/// A structured, leveled logger in the shape of swift-log: constant messages, data in metadata with dotted keys.
///
/// Loggers are values; pass them down and add metadata (`logger[metadataKey: "matrix.room.id"] = …`) rather than
/// building new ones deep in library code. Output goes to a ``LogSink`` (stderr by default) as one line per record.
public struct Logger: Sendable {
    /// Severity of a record, lowest first.
    public enum Level: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        case trace, debug, info, notice, warning, error, critical

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        public var description: String {
            switch self {
            case .trace: "trace"
            case .debug: "debug"
            case .info: "info"
            case .notice: "notice"
            case .warning: "warning"
            case .error: "error"
            case .critical: "critical"
            }
        }

        /// Parses a level name as written in config files and on the command line.
        public init?(name: String) {
            guard let level = Level.allCases.first(where: { $0.description == name.lowercased() }) else { return nil }
            self = level
        }
    }

    /// Metadata attached to records: dotted keys (`xmpp.stanza.id`) to string values.
    public typealias Metadata = [String: String]

    /// The component that logs, e.g. `xmpp.component` or `bridge.portal`.
    public var label: String
    /// Records below this level are dropped before their message or metadata is built.
    public var logLevel: Level
    /// Metadata added to every record of this logger.
    public var metadata: Metadata
    private let sink: LogSink

    /// Creates a logger writing to `sink` (stderr by default).
    public init(label: String, level: Level = .info, metadata: Metadata = [:], sink: LogSink = .standardError) {
        self.label = label
        self.logLevel = level
        self.metadata = metadata
        self.sink = sink
    }

    /// Reads or sets one metadata value of this logger.
    public subscript(metadataKey key: String) -> String? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// A copy of this logger with another label (same level, metadata and sink).
    public func with(label: String) -> Logger {
        var copy = self
        copy.label = label
        return copy
    }

    /// A copy of this logger with extra metadata.
    public func with(_ extra: Metadata) -> Logger {
        var copy = self
        copy.metadata.merge(extra) { _, new in new }
        return copy
    }

    /// Logs `message` at `level` if the logger's level lets it through.
    public func log(_ level: Level, _ message: @autoclosure () -> String, metadata extra: @autoclosure () -> Metadata = [:]) {
        guard level >= logLevel else { return }
        var merged = metadata
        for (key, value) in extra() { merged[key] = value }
        sink.write(LogRecord(date: Date(), level: level, label: label, message: message(), metadata: merged))
    }

    public func trace(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(.trace, message(), metadata: metadata())
    }
    public func debug(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(.debug, message(), metadata: metadata())
    }
    public func info(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(.info, message(), metadata: metadata())
    }
    public func notice(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(.notice, message(), metadata: metadata())
    }
    public func warning(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(.warning, message(), metadata: metadata())
    }
    public func error(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(.error, message(), metadata: metadata())
    }
    public func critical(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(.critical, message(), metadata: metadata())
    }
}

extension Logger {
    /// A logger that drops everything (for tests and benchmarks).
    public static var disabled: Logger { Logger(label: "disabled", level: .critical, sink: .discard) }
}
