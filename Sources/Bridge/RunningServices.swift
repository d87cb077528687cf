import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import IsthmusCommon
import Synchronization

/// The long-running services of `serve`, by name, so a shutdown can say which one did not stop in time.
///
/// Each service runs as a child task of the runtime's task group and removes its name when it returns. The shutdown
/// watchdog runs on a Dispatch timer, outside the task group it guards, and exits the process if the services have not
/// all stopped by the deadline — all state is durable in the store by then, so nothing is lost; the log says what hung.
final class RunningServices: Sendable {
    private let names = Mutex<Set<String>>([])
    private let stopped = Atomic<Bool>(false)

    /// Starts `body` as a child task named `name`.
    func add(_ group: inout TaskGroup<Void>, _ name: String, _ body: @escaping @Sendable () async -> Void) {
        names.withLock { _ = $0.insert(name) }
        group.addTask { [self] in
            await body()
            names.withLock { _ = $0.remove(name) }
        }
    }

    /// Every service returned.
    func markStopped() {
        stopped.store(true, ordering: .sequentiallyConsistent)
    }

    /// Arms the shutdown watchdog: if the services are still running after `deadline`, logs them and exits.
    func exitIfStillRunning(after deadline: Duration, logger: Logger) {
        let seconds = Double(deadline.components.seconds)
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
            guard !stopped.load(ordering: .sequentiallyConsistent) else { return }
            let left = names.withLock { $0.sorted() }
            logger.error("Shutdown deadline passed; exiting", metadata: [
                "shutdown.deadline": "\(deadline)", "shutdown.still_running": left.joined(separator: ","),
            ])
            exit(0)
        }
    }
}
