import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The long-running services of a process (`isthmus serve`), by name, so a shutdown can say which one did not stop
/// in time.
///
/// Each service runs as a child task of the owner's task group and removes its name when it returns. The shutdown
/// watchdog runs on a Dispatch timer, outside the task group it guards, and exits the process with
/// ``hungShutdownExitStatus`` if the services have not all stopped by the deadline (for `serve` all state is durable in
/// the store by then, so nothing is lost; the log says what hung). `Sendable`: any thread may call it.
public final class RunningServices: Sendable {
    /// The process's exit status when the shutdown deadline passed with services still running: a failure, so a
    /// supervisor notices a bridge that hangs on shutdown (a clean stop exits 0).
    public static let hungShutdownExitStatus: Int32 = 1

    /// What the watchdog does when its deadline passes.
    public enum Verdict: Sendable, Equatable {
        /// Every service returned in time: nothing to do.
        case stopped
        /// These services (sorted) are still running: log them and exit with `status`.
        case exit(status: Int32, stillRunning: [String])
    }

    private let names = Mutex<Set<String>>([])
    private let stopped = Atomic<Bool>(false)

    public init() {}

    /// Starts `body` as a child task of `group`, named `name`.
    public func add(_ group: inout TaskGroup<Void>, _ name: String, _ body: @escaping @Sendable () async -> Void) {
        names.withLock { _ = $0.insert(name) }
        group.addTask { [self] in
            await body()
            names.withLock { _ = $0.remove(name) }
        }
    }

    /// Every service returned (call after the task group ends).
    public func markStopped() {
        stopped.store(true, ordering: .sequentiallyConsistent)
    }

    /// The watchdog's decision now: ``Verdict/stopped`` after ``markStopped()``, else an exit naming what still runs.
    public func verdict() -> Verdict {
        guard !stopped.load(ordering: .sequentiallyConsistent) else { return .stopped }
        return .exit(status: Self.hungShutdownExitStatus, stillRunning: names.withLock { $0.sorted() })
    }

    /// Ends the process from a watchdog's Dispatch thread: flushes stdio, then `_exit`. Not `exit`: its atexit
    /// handlers and static destructors would run while the store's thread may still be inside libpq or SQLite (the
    /// teardown race `serve` avoids on its normal path by closing the store last). The log sink writes each line with
    /// `write(2)` as it is logged, so nothing of the log is lost.
    public static func exitNow(_ status: Int32) -> Never {
        fflush(nil)
        _exit(status)
    }

    /// Arms the shutdown watchdog: after `deadline`, unless every service stopped, logs what still runs and calls
    /// `exit` with ``hungShutdownExitStatus`` (``exitNow(_:)`` by default; tests pass a recorder).
    public func exitIfStillRunning(
        after deadline: Duration, logger: Logger, exit: @escaping @Sendable (Int32) -> Void = { RunningServices.exitNow($0) }
    ) {
        let nanoseconds = Int(deadline.components.seconds) * 1_000_000_000
            + Int(deadline.components.attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
            guard case .exit(let status, let left) = verdict() else { return }
            logger.error("Shutdown deadline passed; exiting", metadata: [
                "shutdown.deadline": "\(deadline)", "shutdown.still_running": left.joined(separator: ","),
                "shutdown.exit_status": String(status),
            ])
            exit(status)
        }
    }
}
