import IsthmusCommon
#if canImport(Glibc)
import Glibc
#endif

/// The bridge's durable state: a SQLite database (WAL mode, the embedded default) or a PostgreSQL database
/// (`database.url`), owned by this actor.
///
/// Every read and write goes through this actor, so its connection is never used from two threads — except the
/// lease's statements, which run on a connection and thread of their own (``LeaseChannel``). The actor runs
/// on its own serial executor, one dedicated thread (``StoreExecutor``): SQLite's disk I/O and PostgreSQL's round trips
/// block that thread, never one of Swift's cooperative pool. Tables live in `<Table>Table.swift` files with their SQL
/// at the top, written once for both backends through ``Database``; schema changes are numbered ``Migration``s.
/// Several processes may open the same database (the CLI beside `serve`): SQLite's locking and a busy timeout, or
/// PostgreSQL's row locks and constraints, serialise them.
public actor Store {
    let database: Database
    /// The thread every method of this actor runs on.
    private let executor: StoreExecutor
    /// The store's own thread (``StoreExecutor``): Swift runs every method of this actor there.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// Where the database lives.
    public nonisolated let location: DatabaseLocation
    let logger: Logger
    /// The lease's own connection and thread, opened on first use (``LeaseChannel``).
    nonisolated let leaseChannels: LeaseChannelSlot
    /// Checkpoints the write-ahead log off this actor (SQLite files only).
    private let checkpointer: WALCheckpointer?
    /// The lease every write transaction checks first (``fence(with:)``); nil: no active/standby pair, no check.
    var fence: LeaseGrant?
    /// Writes the fence refused (``fenceTripped``).
    var fenceRefusals = 0
    /// The commit group the hot path's writes are joining, if one is open (``groupedWrite(_:)``).
    var openGroup: CommitGroup?

    /// How hard each commit is pushed to the disk (SQLite only; PostgreSQL's `synchronous_commit` is the server's).
    public nonisolated let synchronous: StoreSynchronous
    /// Calls, wake-ups, statements and commits since the store opened (the lease's and the checkpointer's own
    /// connections not included).
    public nonisolated let activity: StoreActivity

    /// Opens a SQLite database at `path` (see ``init(location:synchronous:logger:)``).
    public init(path: String, synchronous: StoreSynchronous = .normal, logger: Logger) throws {
        try self.init(location: .sqlite(path: path), synchronous: synchronous, logger: logger)
    }

    /// Opens the database at `location`, applies pending migrations and starts the store's thread. Does I/O on the
    /// caller's thread (once, at start-up); everything after runs on the store's thread.
    /// - Throws: ``StoreError`` (``StoreError/Kind/unavailable`` when PostgreSQL cannot be reached,
    ///   ``StoreError/Kind/unknownSchema`` when a newer binary migrated the database).
    public init(location: DatabaseLocation, synchronous: StoreSynchronous = .normal, logger: Logger) throws {
        self.location = location
        self.synchronous = synchronous
        self.logger = logger
        let activity = StoreActivity()
        self.activity = activity
        leaseChannels = LeaseChannelSlot(location: location, logger: logger)
        switch location {
        case .sqlite(let path):
            (database, checkpointer) = try Self.openSQLite(path: path, synchronous: synchronous, activity: activity)
        case .postgres(let url, let poolSize):
            // Once, before any connect: libpq's own parse errors would quote the URL, password and all.
            do { _ = try PostgresConnection.validate(url.rawValue) } catch { throw StoreError(.other, error.description) }
            database = Database(.postgres(PostgresPool(url: url.rawValue, size: poolSize, logger: logger)), logger: logger,
                                activity: activity)
            checkpointer = nil
        }
        let applied = try Migrations.apply(Migrations.all, to: database)
        if !applied.isEmpty {
            logger.info("Applied store migrations", metadata: [
                "store.location": "\(location)", "store.migrations": applied.map(String.init).joined(separator: ","),
            ])
        }
        executor = try StoreExecutor(activity: activity)
    }

    deinit {
        executor.stop()
    }

    /// Closes the store for good before the process exits: closes the lease's channel (and stops its thread), stops
    /// the checkpointer (joining its thread), closes the database on the store's thread, then stops that thread and
    /// waits until it has ended. Call it last: a store call after it never runs.
    /// Without this, `serve` returned while the store's threads could still be running when `exit` tore the process
    /// down (rarely, a heap corruption abort after "Isthmus stopped"). The thread's own exit (OpenSSL's thread-exit
    /// destructor, after libpq's TLS) may still overlap `exit`: ``OpenSSLLifetime`` keeps OpenSSL's state for that.
    public nonisolated func close() async {
        await leaseChannels.close()
        await closeConnections()
        await executor.stopAndWait()
    }

    private func closeConnections() {
        finishOpenGroup()
        checkpointer?.close()
        database.close()
    }

    /// Opens a SQLite file in WAL mode with its checkpointer (none for in-memory databases).
    private static func openSQLite(path: String, synchronous: StoreSynchronous, activity: StoreActivity) throws(StoreError)
        -> (Database, WALCheckpointer?) {
        do {
            let connection = try SQLiteConnection(path: path)
            try retryingWhenBusy {
                try connection.execute("""
                    PRAGMA journal_mode = WAL;
                    PRAGMA synchronous = \(synchronous.pragmaValue);
                    PRAGMA foreign_keys = ON;
                    """)
            }
            // Checkpoints happen on the checkpointer's own connection and thread. The automatic checkpoint stays, rarer,
            // as the bound on the log's size: under sustained writes a passive checkpoint beside the writer never catches
            // up completely, and only a checkpoint in the writer's own connection lets the log start over.
            guard path != ":memory:" && !path.isEmpty else { return (Database(.sqlite(connection), activity: activity), nil) }
            try connection.execute("PRAGMA wal_autocheckpoint = 4000;")
            return (Database(.sqlite(connection), activity: activity), try WALCheckpointer(path: path, interval: .milliseconds(250)))
        } catch let error as SQLiteError {
            throw StoreError(error)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.other, "\(error)")
        }
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

    /// Runs `body` with the database on this actor (no transaction). Internal: no other module sees the database.
    func read<T: Sendable>(_ body: (Database) throws -> T) throws -> T {
        try body(database)
    }

    /// Runs `body` in one write transaction on this actor; everything in it is durable when this returns.
    /// A fenced store (``fence(with:)``) first checks the lease inside the transaction and throws ``LeaseLostError``.
    @discardableResult
    func write<T: Sendable>(_ body: (Database) throws -> T) throws -> T {
        finishOpenGroup()
        guard let fence else { return try database.transaction { try body(database) } }
        do {
            return try database.transaction {
                try LeaseTable.checkFence(fence, in: database)
                return try body(database)
            }
        } catch let error as LeaseLostError {
            fenceRefusals += 1
            throw error
        }
    }

    /// A write transaction that skips the fence: only the lease's own statements, whose conditions are the fence.
    func writeUnfenced<T: Sendable>(_ body: (Database) throws -> T) throws -> T {
        finishOpenGroup()
        return try database.transaction { try body(database) }
    }

    /// The backend's dialect (for the few store methods whose SQL differs).
    var dialect: SQLDialect { database.dialect }

    /// The connection's `PRAGMA synchronous` as SQLite reports it (1 NORMAL, 2 FULL); nil on PostgreSQL.
    public func synchronousPragma() throws -> Int? {
        guard dialect == .sqlite else { return nil }
        return try database.query("PRAGMA synchronous") { $0.int(0) ?? -1 }.first ?? -1
    }

    /// Numbers of the migrations applied to this database, in order.
    public func appliedMigrations() throws -> [Int] {
        try database.query("SELECT version FROM schema_migrations ORDER BY version") { $0.int(0) ?? 0 }
    }

    /// A number that changes whenever links may have changed, by this process or another one (the CLI): a counter
    /// bumped in the same transaction as every link write (migration 14), so it works alike on both backends.
    public func linkChangeVersion() throws -> Int {
        try database.query("SELECT version FROM room_link_version WHERE id = 1") { $0.int(0) ?? 0 }.first ?? 0
    }
}
