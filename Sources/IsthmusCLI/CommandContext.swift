import FoundationEssentials
import IsthmusCommon
import IsthmusConfig

/// What a running subcommand may use: output streams, the environment, the config location and log level.
public struct CommandContext: Sendable {
    /// Writes to standard output (a trailing newline is added).
    public var print: @Sendable (String) -> Void
    /// Writes to standard error (a trailing newline is added).
    public var printError: @Sendable (String) -> Void
    public var environment: [String: String]
    /// `-c/--config`, else `$ISTHMUS_CONFIG`, else `config/isthmus.yaml`.
    public var configPath: String
    /// `--log-level`, overriding `logging.level`.
    public var logLevelOverride: Logger.Level?
    /// Where log lines go (stderr in production, memory in tests).
    public var logSink: LogSink
    /// Reads standard input to its end (`login --password-stdin`); nil when there is none to read.
    public var readInput: @Sendable () -> String? = { nil }

    /// Loads and validates the config; a failure becomes a one-line ``CommandFailure``.
    public func loadConfig() throws(CommandFailure) -> Config {
        do {
            return try Config.load(path: configPath, environment: environment)
        } catch {
            throw CommandFailure(error.description)
        }
    }

    /// Where `serve` logs: `logging.file` when set (else this context's sink), in `logging.format`, with the level
    /// table of `logging.level` and `logging.levels` — unless `--log-level` set one level for everything.
    /// Does file I/O when logging to a file.
    public func serviceLogSink(_ config: Config) throws(CommandFailure) -> LogSink {
        var sink = logSink
        if let path = config.logging.file {
            do {
                sink = try LogSink.file(path)
            } catch {
                throw CommandFailure(error.description)
            }
        }
        sink.configure(format: config.logging.format, levels: logLevelOverride == nil ? config.logging.levelTable : nil)
        return sink
    }

    /// The process logger for `config`: the level from `--log-level`, else the config's for a service (`serve`);
    /// one-shot commands stay silent unless `--log-level` asks (their outcome is their one line of output).
    public func logger(_ config: Config, label: String = "isthmus", service: Bool = false) -> Logger {
        Logger(label: label, level: logLevelOverride ?? (service ? config.logging.level : .critical), sink: logSink)
    }
}
