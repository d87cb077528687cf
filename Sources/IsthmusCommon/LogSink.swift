import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// One log record as handed to a ``LogSink``.
public struct LogRecord: Sendable {
    public var date: Date
    public var level: Logger.Level
    public var label: String
    public var message: String
    public var metadata: Logger.Metadata

    public init(date: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata = [:]) {
        self.date = date
        self.level = level
        self.label = label
        self.message = message
        self.metadata = metadata
    }
}

/// Where log records go. Writes are serialised by a lock so lines from many threads never interleave.
///
/// The line format is logfmt-like and stable: `2026-11-29T12:00:00.123Z info xmpp.component: Connected key=value …`
/// with metadata sorted by key and values quoted when they are empty or contain whitespace, quotes or `=`.
public final class LogSink: Sendable {
    private enum Target { case standardError, discard, memory }
    private let target: Target
    private let captured = Mutex<[LogRecord]>([])

    private init(_ target: Target) { self.target = target }

    /// Writes each record as one line to stderr and flushes it.
    public static let standardError = LogSink(.standardError)
    /// Drops every record.
    public static let discard = LogSink(.discard)
    /// Keeps records in memory (for tests asserting that something was logged, and how often).
    public static func memory() -> LogSink { LogSink(.memory) }

    /// The records kept by a ``memory()`` sink.
    public var records: [LogRecord] { captured.withLock { $0 } }

    func write(_ record: LogRecord) {
        switch target {
        case .discard:
            return
        case .memory:
            captured.withLock { $0.append(record) }
        case .standardError:
            let line = LogSink.format(record) + "\n"
            captured.withLock { _ in StandardStreams.writeError(line) }
        }
    }

    /// Formats one record as a single line (no trailing newline).
    public static func format(_ record: LogRecord) -> String {
        var line = "\(timestamp(record.date)) \(record.level) \(record.label): \(record.message)"
        for key in record.metadata.keys.sorted() {
            line += " \(key)=\(quote(record.metadata[key] ?? ""))"
        }
        return line
    }

    private static func quote(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.contains(where: { $0.isWhitespace || $0 == "\"" || $0 == "=" })
        guard needsQuotes else { return value }
        var escaped = "\""
        for character in value {
            switch character {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            default: escaped.append(character)
            }
        }
        return escaped + "\""
    }

    private static func timestamp(_ date: Date) -> String {
        // Whole milliseconds first: subtracting seconds from the Double loses precision (….123 became ….122).
        let totalMillis = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let floorSeconds = totalMillis >= 0 ? totalMillis / 1000 : (totalMillis - 999) / 1000
        var seconds = time_t(floorSeconds)
        let millis = Int(totalMillis - floorSeconds * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int = 2) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))T"
            + "\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec)).\(pad(Int32(millis), 3))Z"
    }
}
