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

/// Where log records go: standard error or a file, in ``LogFormat/text`` or ``LogFormat/json``, one line per record.
/// Writes are serialised by a lock so lines from many threads never interleave.
///
/// A sink may carry a ``LogLevels`` table (`serve` sets it from `logging.level` and `logging.levels`): it then decides
/// which records pass for every logger writing to it, and ``configure(levels:)`` changes that at run time (SIGHUP).
/// A file sink reopens its path on ``reopen()`` (after logrotate moved the file). Thread-safe.
public final class LogSink: Sendable {
    private enum Target { case standardError, discard, memory, file(path: String) }
    private struct Output {
        var format: LogFormat = .text
        var levels: LogLevels?
        /// The open file of a file sink.
        var descriptor: Int32 = -1
    }

    private let target: Target
    private let captured = Mutex<[LogRecord]>([])
    private let output = Mutex(Output())
    /// Whether ``Output/levels`` is set: loggers of sinks without a table (most of them) skip the lock.
    private let hasLevels = Atomic<Bool>(false)

    private init(_ target: Target) { self.target = target }

    /// Writes each record as one line to stderr (text format, each logger's own level). Shared: never configured.
    public static let standardError = LogSink(.standardError)
    /// Drops every record.
    public static let discard = LogSink(.discard)
    /// Keeps records in memory (for tests asserting that something was logged, and how often).
    public static func memory() -> LogSink { LogSink(.memory) }
    /// A new stderr sink of its own, which ``configure(format:levels:)`` may change (the process's log in `serve`).
    public static func makeStandardError() -> LogSink { LogSink(.standardError) }

    /// A sink appending to the file at `path` (created with mode 0640 if missing). Does file I/O.
    /// - Throws: ``LogFileError`` when the file cannot be opened.
    public static func file(_ path: String) throws(LogFileError) -> LogSink {
        let sink = LogSink(.file(path: path))
        let descriptor = try openLogFile(path)
        sink.output.withLock { $0.descriptor = descriptor }
        return sink
    }

    deinit {
        let descriptor = output.withLock { $0.descriptor }
        if descriptor >= 0 { close(descriptor) }
    }

    /// The records kept by a ``memory()`` sink.
    public var records: [LogRecord] { captured.withLock { $0 } }

    /// Sets the line format and the level table (nil: each logger's own level decides). Any thread.
    public func configure(format: LogFormat, levels: LogLevels?) {
        output.withLock {
            $0.format = format
            $0.levels = levels
            hasLevels.store(levels != nil, ordering: .releasing)
        }
    }

    /// Replaces the level table only (SIGHUP). Any thread.
    public func configure(levels: LogLevels?) {
        output.withLock {
            $0.levels = levels
            hasLevels.store(levels != nil, ordering: .releasing)
        }
    }

    /// The level that lets a record of `label` through: the table's when there is one, else `own`.
    func threshold(for label: String, own: Logger.Level) -> Logger.Level {
        guard hasLevels.load(ordering: .acquiring) else { return own }
        return output.withLock { $0.levels?.level(for: label) } ?? own
    }

    /// A file sink opens its path again (the old file was moved away by log rotation); other sinks do nothing.
    /// On failure the sink keeps writing to the file it had. Does file I/O.
    public func reopen() throws(LogFileError) {
        guard case .file(let path) = target else { return }
        let descriptor = try Self.openLogFile(path)
        let old = output.withLock { output in
            defer { output.descriptor = descriptor }
            return output.descriptor
        }
        if old >= 0 { close(old) }
    }

    func write(_ record: LogRecord) {
        switch target {
        case .discard:
            return
        case .memory:
            captured.withLock { $0.append(record) }
        case .standardError:
            output.withLock { output in
                let line = Self.format(record, as: output.format) + "\n"
                StandardStreams.writeError(line)
            }
        case .file:
            output.withLock { output in
                let line = Self.format(record, as: output.format) + "\n"
                StandardStreams.write(all: line, to: output.descriptor)
            }
        }
    }

    private static func openLogFile(_ path: String) throws(LogFileError) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard descriptor >= 0 else { throw LogFileError(path: path, reason: String(cString: strerror(errno))) }
        return descriptor
    }

    /// Formats one record as a single line (no trailing newline) in `format`.
    public static func format(_ record: LogRecord, as format: LogFormat) -> String {
        switch format {
        case .text: self.format(record)
        case .json: LogJSON.line(record)
        }
    }

    /// Formats one record as a single text line (no trailing newline):
    /// `2026-11-29T12:00:00.123Z info xmpp.component: Connected key=value …`, metadata sorted by key, values quoted
    /// when they are empty or contain whitespace, quotes or `=`.
    public static func format(_ record: LogRecord) -> String {
        var line = "\(LogTimestamp.rfc3339(record.date, fractionDigits: 3)) \(record.level) \(record.label): \(record.message)"
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
}

/// A log file that could not be opened.
public struct LogFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot open the log file \(path): \(reason)" }
}
