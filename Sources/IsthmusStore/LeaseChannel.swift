import IsthmusCommon
import Synchronization

/// The lease's own way to the database, apart from the store's: its own connection (SQLite: a second connection to
/// the file; PostgreSQL: a pool of one) on its own thread (``StoreExecutor`` named `isthmus-lease`), so a renewal never
/// queues behind a burst of portal writes or one slow query on the ``Store`` actor. The two meet only where they must:
/// on the lease row (the fence's `FOR SHARE` in the store's write transactions; SQLite's write lock).
///
/// An actor on its own executor; every method does I/O on that thread.
actor LeaseChannel {
    private let database: Database
    private let executor: StoreExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Opens the channel's connection (lazily for PostgreSQL: the pool connects on first use) and starts its thread;
    /// nil for an in-memory SQLite database, which a second connection would not see (the store's own serves then).
    init?(location: DatabaseLocation, logger: Logger) throws {
        switch location {
        case .sqlite(let path):
            guard path != ":memory:" && !path.isEmpty else { return nil }
            do {
                let connection = try SQLiteConnection(path: path)
                try connection.execute("PRAGMA foreign_keys = ON;")
                database = Database(.sqlite(connection), logger: logger)
            } catch {
                throw StoreError(error)
            }
        case .postgres(let url, _):
            database = Database(.postgres(PostgresPool(url: url.rawValue, size: 1, logger: logger)), logger: logger)
        }
        executor = try StoreExecutor(name: "isthmus-lease")
    }

    deinit {
        executor.stop()
    }

    /// Runs `body` in one transaction on the channel's connection. Blocks the channel's thread on I/O.
    func transaction<T: Sendable>(_ body: (Database) throws -> T) throws -> T {
        try database.transaction { try body(database) }
    }

    /// Closes the connection and stops the thread (the store closing for good).
    nonisolated func close() async {
        await closeConnection()
        await executor.stopAndWait()
    }

    private func closeConnection() {
        database.close()
    }
}

/// The store's ``LeaseChannel``, opened on first use (most stores never take a lease: tests, the CLI). Thread-safe.
final class LeaseChannelSlot: Sendable {
    private let location: DatabaseLocation
    private let logger: Logger
    private let state = Mutex<State>(.unopened)

    private enum State {
        case unopened
        /// Opened; nil: the store's own connection serves (in-memory SQLite).
        case opened(LeaseChannel?)
        case closed
    }

    init(location: DatabaseLocation, logger: Logger) {
        self.location = location
        self.logger = logger
    }

    /// The channel, opened now if it is not yet; nil when the store's own connection must serve. Opening a SQLite
    /// connection does file I/O on the caller's thread (once).
    func channel() throws -> LeaseChannel? {
        try state.withLock { state in
            switch state {
            case .opened(let channel): return channel
            case .closed: throw StoreError(.unavailable, "the store is closed")
            case .unopened:
                let channel = try LeaseChannel(location: location, logger: logger)
                state = .opened(channel)
                return channel
            }
        }
    }

    /// Closes the channel if it was opened; later calls fail.
    func close() async {
        let channel: LeaseChannel? = state.withLock { state in
            defer { state = .closed }
            if case .opened(let channel) = state { return channel }
            return nil
        }
        await channel?.close()
    }
}
