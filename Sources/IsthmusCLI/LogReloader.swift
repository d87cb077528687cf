import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import IsthmusCommon
import IsthmusConfig

/// SIGHUP in `serve`: the log file is reopened (after logrotate moved it) and the log levels are read again from the
/// config file (`logging.level` and `logging.levels`). Nothing else is reloaded: `logging.format`, `logging.file` and
/// every other key take a restart.
///
/// The signal arrives through a Dispatch signal source on its own serial queue (no Task per signal, nothing done in
/// a signal handler); the reload does file I/O on that queue. A config that no longer loads is logged with its error,
/// verbatim with line and column, and the levels stay as they were.
final class LogReloader {
    private let source: any DispatchSourceSignal

    /// Starts handling SIGHUP until ``cancel()``. `levelOverride`: `--log-level`, which keeps every logger at that
    /// level (the levels are then not re-read).
    init(sink: LogSink, configPath: String, environment: [String: String], levelOverride: Logger.Level?, logger: Logger) {
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: DispatchQueue(label: "isthmus.sighup"))
        source.setEventHandler {
            Self.reload(sink: sink, configPath: configPath, environment: environment, levelOverride: levelOverride, logger: logger)
        }
        source.resume()
        self.source = source
    }

    /// Stops handling SIGHUP (it is then ignored).
    func cancel() { source.cancel() }

    static func reload(sink: LogSink, configPath: String, environment: [String: String], levelOverride: Logger.Level?,
                       logger: Logger) {
        do {
            try sink.reopen()
        } catch {
            logger.error("Could not reopen the log file; still writing to the old one", metadata: ["error": error.description])
        }
        guard levelOverride == nil else {
            logger.notice("SIGHUP: log reopened; levels stay at --log-level")
            return
        }
        do {
            let config = try Config.load(path: configPath, environment: environment)
            sink.configure(levels: config.logging.levelTable)
            // At notice, under the new levels: shown unless they ask for warnings only.
            logger.notice("SIGHUP: log reopened and log levels re-read", metadata: [
                "log.level": config.logging.level.description,
                "log.levels": config.logging.levels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","),
            ])
        } catch {
            logger.error("SIGHUP: the config could not be read; log levels unchanged", metadata: ["config.error": error.description])
        }
    }
}
