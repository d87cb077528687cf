import IsthmusCommon
#if canImport(Glibc)
import Glibc
#endif

/// The bridge's durable state: one SQLite database (WAL mode) owned by this actor.
///
/// Every read and write goes through this actor, so the connection is never used from two threads. The actor runs
/// on its own serial executor, one dedicated thread (``StoreExecutor``): SQLite and its disk I/O block that thread,
/// never one of Swift's cooperative pool. Tables live in `<Table>Table.swift` files with their SQL at the
/// top; schema changes are numbered ``Migration``s.
/// Several processes may open the same file (the CLI beside `serve`): SQLite's locking and a busy timeout serialise them.
public actor Store {
    private let connection: SQLiteConnection
    /// The thread every method of this actor runs on.
    private let executor: StoreExecutor
    /// The store's own thread (``StoreExecutor``): Swift runs every method of this actor there.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// Where the database lives (`:memory:` for tests).
    public nonisolated let path: String
    private let logger: Logger
    /// Bumped by this process's own link changes (`data_version` only reflects other connections' commits).
    var localLinkChanges = 0
    /// Checkpoints the write-ahead log off this actor (nil for in-memory databases).
    private let checkpointer: WALCheckpointer?
    /// The lease every write transaction checks first (``fence(with:)``); nil: no active/standby pair, no check.
    var fence: LeaseGrant?
    /// Writes the fence refused (``fenceTripped``).
    var fenceRefusals = 0

    /// How hard each commit is pushed to the disk.
    public nonisolated let synchronous: StoreSynchronous

    /// Opens the database at `path`, applies pending migrations and starts the store's thread. Does file I/O on the
    /// caller's thread (once, at start-up); everything after runs on the store's thread.
    public init(path: String, synchronous: StoreSynchronous = .normal, logger: Logger) throws {
        self.path = path
        self.synchronous = synchronous
        self.logger = logger
        connection = try SQLiteConnection(path: path)
        let connection = self.connection
        try Self.retryingWhenBusy {
            try connection.execute("""
                PRAGMA journal_mode = WAL;
                PRAGMA synchronous = \(synchronous.pragmaValue);
                PRAGMA foreign_keys = ON;
                """)
        }
        // Checkpoints happen on the checkpointer's own connection and thread. The automatic checkpoint stays, rarer,
        // as the bound on the log's size: under sustained writes a passive checkpoint beside the writer never catches
        // up completely, and only a checkpoint in the writer's own connection lets the log start over.
        if path != ":memory:" && !path.isEmpty {
            try connection.execute("PRAGMA wal_autocheckpoint = 4000;")
            checkpointer = try WALCheckpointer(path: path, interval: .milliseconds(250))
        } else {
            checkpointer = nil
        }
        let applied = try Migrations.apply(Migrations.all, to: connection)
        if !applied.isEmpty {
            logger.info("Applied store migrations", metadata: [
                "store.path": path, "store.migrations": applied.map(String.init).joined(separator: ","),
            ])
        }
        executor = try StoreExecutor()
    }

    deinit {
        executor.stop()
    }

    /// Runs `body` again while SQLite answers `SQLITE_BUSY` (up to ~2 s). Switching a new file to WAL needs an exclusive
    /// lock, and when two processes open the same new file at once (the CLI beside `serve`) SQLite returns BUSY at
    /// once instead of calling the busy handler, since waiting could deadlock; one of them must let go and try again.
    /// Start-up only: it blocks the calling thread.
    private static func retryingWhenBusy(_ body: () throws -> Void) throws {
        var attempt = 0
        while true {
            do {
                return try body()
            } catch let error as SQLiteError where error.code.primary == .busy && attempt < 100 {
                attempt += 1
                usleep(20_000)
            }
        }
    }

    /// Runs `body` with the connection on this actor (no transaction). Internal: no other module sees the connection.
    func read<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try body(connection)
    }

    /// Runs `body` in one write transaction on this actor; everything in it is durable when this returns.
    /// A fenced store (``fence(with:)``) first checks the lease inside the transaction and throws ``LeaseLostError``.
    @discardableResult
    func write<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        guard let fence else { return try connection.transaction { try body(connection) } }
        do {
            return try connection.transaction {
                try LeaseTable.checkFence(fence, in: connection)
                return try body(connection)
            }
        } catch let error as LeaseLostError {
            fenceRefusals += 1
            throw error
        }
    }

    /// A write transaction that skips the fence: only the lease's own statements, whose conditions are the fence.
    func writeUnfenced<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try connection.transaction { try body(connection) }
    }

    /// The connection's `PRAGMA synchronous` as SQLite reports it (1 NORMAL, 2 FULL).
    public func synchronousPragma() throws -> Int {
        try connection.query("PRAGMA synchronous") { $0.int(0) ?? -1 }.first ?? -1
    }

    /// Numbers of the migrations applied to this database, in order.
    public func appliedMigrations() throws -> [Int] {
        try connection.query("SELECT version FROM schema_migrations ORDER BY version") { $0.int(0) ?? 0 }
    }

    /// A number that changes whenever links may have changed: SQLite's `data_version` (other connections' commits,
    /// e.g. the CLI) plus this process's own link writes.
    public func linkChangeVersion() throws -> Int {
        (try connection.query("PRAGMA data_version") { $0.int(0) ?? 0 }.first ?? 0) &+ localLinkChanges &* 1_000_003
    }
}
