import IsthmusCommon
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The serial executor of ``Store``: runs the actor's jobs one at a time, in order, on one dedicated thread
/// (`isthmus-store`), so SQLite calls and their disk I/O never hold a thread of Swift's cooperative pool.
///
/// GRDB does the same with a serial `DispatchQueue` per connection. On Linux a `DispatchQueue` is not a
/// `SerialExecutor` (there is no `DispatchSerialQueue`), hence a thread of our own: a FIFO of jobs under a `Mutex`,
/// and a semaphore the thread sleeps on only when the FIFO is empty (so a busy store takes no system call per job).
/// Thread-safe. ``stop()`` lets the thread finish the queued jobs and end.
final class StoreExecutor: SerialExecutor {
    private struct Queue {
        var jobs: [UnownedJob] = []
        /// The thread found no job and waits on `wakeup` (or is about to): the next enqueue signals it.
        var sleeping = false
        var stopping = false
        /// The thread's id, for ``checkIsolated()``.
        var thread: pthread_t?

        /// Whether the thread sleeps and must be signalled (then it no longer counts as sleeping).
        mutating func takeSleeper() -> Bool {
            defer { sleeping = false }
            return sleeping
        }
    }

    private let queue = Mutex(Queue())
    private let wakeup = DispatchSemaphore(value: 0)
    /// Signalled once when the thread has ended (after its last job).
    private let ended = DispatchSemaphore(value: 0)

    /// Where the calls run and the wake-ups are counted.
    private let activity: StoreActivity

    /// Starts the thread. The thread keeps the executor alive until it ends, since jobs still queued refer to it.
    /// - Throws: ``ThreadStartError`` when the thread cannot be started.
    init(name: String = "isthmus-store", activity: StoreActivity = StoreActivity()) throws(ThreadStartError) {
        self.activity = activity
        try DedicatedThread.start(name: name) { [self] in runLoop() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let wake = queue.withLock { queue in
            queue.jobs.append(job)
            return queue.takeSleeper()
        }
        if wake { wakeup.signal() }
    }

    /// Called by the runtime when a check that code runs on this executor failed its fast path
    /// (`assumeIsolated`, `preconditionIsolated`): returns on the executor's thread, traps on any other.
    func checkIsolated() {
        let thread = queue.withLock { $0.thread }
        precondition(thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false,
                     "Expected to run on the store's thread")
    }

    /// Lets the thread end once the jobs already queued have run. Does not wait for it (it may be the caller).
    func stop() {
        let wake = queue.withLock { queue in
            queue.stopping = true
            return queue.takeSleeper()
        }
        if wake { wakeup.signal() }
    }

    /// Stops the thread (see ``stop()``) and returns once it has run its last job and ended, so nothing runs on it
    /// while the process exits. Must not be called from a job of this executor (it would wait for itself). The wait is
    /// on a Dispatch thread, not one of the cooperative pool's.
    func stopAndWait() async {
        stop()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { [ended] in
                ended.wait()
                ended.signal()  // a second caller returns too
                continuation.resume()
            }
        }
    }

    /// The thread: takes all queued jobs at once and runs them in order; sleeps while there are none.
    private func runLoop() {
        let executor = asUnownedSerialExecutor()
        queue.withLock { $0.thread = pthread_self() }
        var batch: [UnownedJob] = []
        while true {
            let next = queue.withLock { queue -> Next in
                if !queue.jobs.isEmpty {
                    swap(&queue.jobs, &batch)
                    return .run
                }
                if queue.stopping { return .end }
                queue.sleeping = true
                return .sleep
            }
            switch next {
            case .run:
                activity.ranCalls(batch.count)
                for job in batch { job.runSynchronously(on: executor) }
                batch.removeAll(keepingCapacity: true)
            case .sleep:
                wakeup.wait()
                activity.wokeUp()
            case .end:
                ended.signal()
                return
            }
        }
    }

    private enum Next { case run, sleep, end }
}
