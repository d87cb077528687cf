import Synchronization

/// What the store has done since it opened: calls run on its thread, the times that thread had to be woken, SQL
/// statements and commits. Counted where they happen (the store's thread), read from any thread — by the metrics
/// (`isthmus_store_*_total`) and by `scripts/bench`, which divides them by the messages bridged (issue 26's
/// per-message breakdown). Relaxed atomic additions: a few nanoseconds beside a statement's microseconds.
public final class StoreActivity: Sendable {
    /// The counters at one moment.
    public struct Snapshot: Sendable, Equatable {
        /// Jobs run on the store's thread: each call into the ``Store`` actor from another thread is one (a hop there
        /// and, for the caller, one back).
        public var calls: Int
        /// Times the store's thread found nothing to do and waited for a call (a wait that usually sleeps, and a
        /// wake-up from the caller: a system call on each side).
        public var wakeups: Int
        /// SQL calls sent to the database (each a round trip on PostgreSQL; a script of several statements, as a
        /// migration runs, counts once), the transactions' own `BEGIN`/`COMMIT` not included.
        public var statements: Int
        /// Transactions committed (each an fsync on SQLite's `FULL` and on PostgreSQL's default durability).
        public var commits: Int
        /// PostgreSQL: exchanges the store's thread waited for the server's answer to: each statement, `BEGIN` and
        /// `COMMIT` on its own, or a whole transaction sent at once (pipeline mode: ``Store/groupedWrite(planned:)``).
        /// 0 on SQLite, which has no server.
        public var roundTrips: Int

        public init(calls: Int = 0, wakeups: Int = 0, statements: Int = 0, commits: Int = 0, roundTrips: Int = 0) {
            self.calls = calls
            self.wakeups = wakeups
            self.statements = statements
            self.commits = commits
            self.roundTrips = roundTrips
        }
    }

    private let calls = Atomic<Int>(0)
    private let wakeups = Atomic<Int>(0)
    private let statements = Atomic<Int>(0)
    private let commits = Atomic<Int>(0)
    private let roundTrips = Atomic<Int>(0)

    /// Counters at zero.
    public init() {}

    /// The counters now (each read on its own: a snapshot taken while the store works may be a call apart).
    public func snapshot() -> Snapshot {
        Snapshot(calls: calls.load(ordering: .relaxed), wakeups: wakeups.load(ordering: .relaxed),
                 statements: statements.load(ordering: .relaxed), commits: commits.load(ordering: .relaxed),
                 roundTrips: roundTrips.load(ordering: .relaxed))
    }

    func ranCalls(_ count: Int) { calls.wrappingAdd(count, ordering: .relaxed) }
    func wokeUp() { wakeups.wrappingAdd(1, ordering: .relaxed) }
    func ranStatement() { statements.wrappingAdd(1, ordering: .relaxed) }
    func committed() { commits.wrappingAdd(1, ordering: .relaxed) }
    func madeRoundTrips(_ count: Int) { roundTrips.wrappingAdd(count, ordering: .relaxed) }
}
