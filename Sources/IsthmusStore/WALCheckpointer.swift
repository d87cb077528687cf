import IsthmusCommon
import Dispatch
import Synchronization

/// Copies the write-ahead log back into the database file from its own connection on its own thread (a PASSIVE
/// checkpoint every `interval`), so the ``Store`` actor never waits for one.
///
/// SQLite's automatic checkpoint runs inside the commit that takes the log past 1,000 pages: milliseconds of copying
/// and two `fdatasync`s, during which every room's next store call waits. A passive checkpoint from another
/// connection runs beside the writer instead (SQLite docs, "Write-Ahead Logging" §3.5, application-initiated
/// checkpoints). Thread-safe; ``close()`` stops the thread.
final class WALCheckpointer: Sendable {
    /// The checkpointer's connection, used only by its thread.
    private final class Connection: @unchecked Sendable {
        let sqlite: SQLiteConnection
        init(_ sqlite: SQLiteConnection) { self.sqlite = sqlite }
    }

    /// What the thread and the owner share.
    private final class Control: Sendable {
        let stopped = Mutex(false)
        let wakeup = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
    }

    private let control = Control()

    /// Opens a second connection to `path` and starts checkpointing every `interval`.
    init(path: String, interval: Duration) throws {
        let connection = Connection(try SQLiteConnection(path: path))
        let control = self.control
        let milliseconds = Int(interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)
        try DedicatedThread.start(name: "isthmus-checkpoint") {
            while !control.stopped.withLock({ $0 }) {
                _ = control.wakeup.wait(timeout: .now() + .milliseconds(milliseconds))
                try? connection.sqlite.execute("PRAGMA wal_checkpoint(PASSIVE)")
            }
            control.finished.signal()
        }
    }

    /// Stops the thread (after at most one more checkpoint) and closes its connection. Idempotent.
    func close() {
        let first = control.stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        control.wakeup.signal()
        control.finished.wait()
    }

    deinit { close() }
}
