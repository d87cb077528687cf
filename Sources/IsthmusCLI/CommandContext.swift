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

    /// Loads and validates the config; a failure becomes a one-line ``CommandFailure``.
    public func loadConfig() throws(CommandFailure) -> Config {
        do {
            return try Config.load(path: configPath, environment: environment)
        } catch {
            throw CommandFailure(error.description)
        }
    }

    /// The process logger for `config`: the level from `--log-level`, else the config's for a service (`serve`);
    /// one-shot commands stay silent unless `--log-level` asks (their outcome is their one line of output).
    public func logger(_ config: Config, label: String = "isthmus", service: Bool = false) -> Logger {
        Logger(label: label, level: logLevelOverride ?? (service ? config.logging.level : .critical), sink: logSink)
    }
}
