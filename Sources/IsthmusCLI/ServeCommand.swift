import Bridge
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import IsthmusCommon

/// `isthmus serve`: runs the bridge until SIGTERM or SIGINT, then shuts down cleanly.
struct ServeCommand: Subcommand {
    static let configuration = CommandConfiguration(
        name: "serve",
        abstract: "Run the bridge until SIGTERM or SIGINT.",
        discussion: """
            Listens for the homeserver on appservice.listen, connects to the XMPP server as the component, joins every
            linked room, catches up on what was missed, and applies `link`/`unlink` changes within seconds.
            With ha.enabled, starts as the standby of an active/standby pair and acts only while holding the lease;
            exits with status 75 when it loses the lease while active.
            """)

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requirePositionals([], command: Self.configuration.name)
    }

    func run(_ context: CommandContext) async throws {
        let config = try context.loadConfig()
        let sink = try context.serviceLogSink(config)
        let logger = Logger(label: "isthmus", level: context.logLevelOverride ?? config.logging.level, sink: sink)
        let stop = SignalStream.termination()
        let reloader = LogReloader(sink: sink, configPath: context.configPath, environment: context.environment,
                                   levelOverride: context.logLevelOverride, logger: logger)
        defer { reloader.cancel() }
        do {
            try await BridgeRuntime(config: config, logger: logger).run(until: stop)
        } catch is BridgeRuntime.LeaseLost {
            // Not a failure to start but a hand-over (logged by the runtime): a distinct status, and the supervisor
            // (systemd `Restart=always`) starts the process again, as a standby. See docs/deploy.md.
            exit(LeaseKeeper.leaseLostExitStatus)
        } catch let error as BridgeRuntime.StartError {
            throw CommandFailure(error.description)
        } catch {
            throw CommandFailure("cannot start: \(error)")
        }
    }
}

/// SIGTERM and SIGINT as an async stream (the default handlers are replaced, so the process exits only once the
/// bridge has shut down).
enum SignalStream {
    static func termination() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        let queue = DispatchQueue(label: "isthmus.signals")
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { continuation.yield() }
            source.resume()
            sources.append(source)
        }
        let retained = SignalSources(sources)
        continuation.onTermination = { _ in retained.cancel() }
        return stream
    }

    /// Keeps the signal sources alive as long as the stream.
    final class SignalSources: @unchecked Sendable {
        let sources: [any DispatchSourceSignal]
        init(_ sources: [any DispatchSourceSignal]) { self.sources = sources }
        func cancel() { sources.forEach { $0.cancel() } }
    }
}
