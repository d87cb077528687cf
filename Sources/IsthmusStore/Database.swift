import IsthmusCommon

/// The SQL dialect a ``Database`` speaks, for the few statements that differ (schema types, PRAGMAs, advisory locks).
/// Everything else is written once in the subset both accept: `?` placeholders, `INSERT … ON CONFLICT`, `RETURNING`.
enum SQLDialect: Sendable, Equatable {
    case sqlite
    case postgres
}

/// One connection to the database, over either backend: what every table file talks to. The ``Store`` actor holds
/// one; the ``LeaseChannel``, `migrate-store` (``StoreCopy``) and `doctor` (``StoreDiagnosis``) open their own.
///
/// Not thread-safe: each is used by its owner on one thread (the store's, the lease's, or the caller's). Backend
/// errors leave it as ``StoreError`` — the backends' own error types stay inside this target. The SQLite path adds one
/// `switch` per call and per column read, nothing per parameter (the parameters are forwarded as the array the
/// variadic call built).
final class Database {
    /// The connection behind the wrapper.
    enum Backend {
        /// One SQLite connection (the file is in WAL mode once a ``Store`` has opened it).
        case sqlite(SQLiteConnection)
        /// A pool of PostgreSQL connections: each call runs on a healthy one; a transaction keeps one for its body.
        case postgres(PostgresPool)
    }

    let backend: Backend
    /// The dialect of ``backend``.
    let dialect: SQLDialect
    /// PostgreSQL: the connection the current transaction runs on (nil outside ``transaction(_:)``).
    var pinned: PostgresConnection?
    /// Where hostile input the database cannot hold is reported (rate-limited: ``HostileTextLog``).
    let logger: Logger
    /// When text with NUL characters was last reported, and how many values were cleaned since.
    var hostileText = HostileTextLog()
    /// Where its statements and commits are counted (the ``Store``'s own; a private one for the other owners).
    let activity: StoreActivity

    init(_ backend: Backend, logger: Logger = .disabled, activity: StoreActivity = StoreActivity()) {
        self.backend = backend
        self.logger = logger
        self.activity = activity
        switch backend {
        case .sqlite: dialect = .sqlite
        case .postgres: dialect = .postgres
        }
    }

    /// Closes the connection (SQLite) or the pool's idle connections (PostgreSQL) when the store closes for good.
    func close() {
        switch backend {
        case .sqlite(let connection): connection.close()
        case .postgres(let pool): pool.closeIdle()
        }
    }

    /// Runs one or more statements without parameters (schema, pragmas). Blocks on I/O.
    func execute(_ sql: String) throws(StoreError) {
        activity.ranStatement()
        switch backend {
        case .sqlite(let connection):
            do { try connection.execute(sql) } catch { throw StoreError(error) }
        case .postgres:
            try withPostgres { connection throws(PostgresError) in try connection.execute(sql) }
        }
    }

    /// Runs a statement that returns no rows; returns the number of rows it changed. Blocks on I/O.
    @discardableResult
    func run(_ sql: String, _ parameters: any SQLBindable...) throws(StoreError) -> Int {
        try run(sql, parameters)
    }

    /// ``run(_:_:)`` with the parameters in an array.
    @discardableResult
    func run(_ sql: String, _ parameters: [any SQLBindable]) throws(StoreError) -> Int {
        activity.ranStatement()
        switch backend {
        case .sqlite(let connection):
            do { return try connection.run(sql, parameters: parameters) } catch { throw StoreError(error) }
        case .postgres:
            let values = postgresValues(parameters)
            return try withPostgres { connection throws(PostgresError) in try connection.run(sql, values) }
        }
    }

    /// Runs a query and maps each row (errors thrown by `map` pass through unchanged). Blocks on I/O.
    func query<T>(_ sql: String, _ parameters: any SQLBindable..., map: (Row) throws -> T) throws -> [T] {
        try query(sql, parameters, map: map)
    }

    /// ``query(_:_:map:)`` with the parameters in an array (a statement built for a number of rows).
    func query<T>(_ sql: String, _ parameters: [any SQLBindable], map: (Row) throws -> T) throws -> [T] {
        activity.ranStatement()
        switch backend {
        case .sqlite(let connection):
            do {
                return try connection.query(sql, parameters: parameters) { try map(.sqlite($0)) }
            } catch let error as SQLiteError {
                throw StoreError(error)
            }
        case .postgres:
            let values = postgresValues(parameters)
            return try withPostgresRethrowing { connection in
                try connection.query(sql, values) { try map(.postgres($0)) }
            }
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws. SQLite: `BEGIN IMMEDIATE`
    /// (the write lock is taken at once, so two processes never deadlock upgrading a read lock). PostgreSQL: `BEGIN`
    /// (READ COMMITTED) on one connection kept for the whole body; the statements that read and then write rows another
    /// process could write meanwhile say how they stay correct (an upsert, a unique constraint, a lock).
    func transaction<T>(_ body: () throws -> T) throws -> T {
        let result: T
        switch backend {
        case .sqlite(let connection):
            do {
                result = try connection.transaction(body)
            } catch let error as SQLiteError {
                throw StoreError(error)
            }
        case .postgres(let pool):
            do {
                result = try postgresTransaction(pool, body)
            } catch let error as StoreError where Self.runsAgainOnce(error.sqlState) {
                // A serialization failure or a deadlock: PostgreSQL rolled the whole transaction back, and running it
                // again usually succeeds. Once; a second failure is ``StoreError/Kind/unavailable``. The bodies only
                // read and write the database, so running one twice is safe.
                result = try postgresTransaction(pool, body)
            }
        }
        activity.committed()
        return result
    }

    /// A serialization failure (`40001`) or a deadlock (`40P01`): PostgreSQL rolled the whole transaction back, and
    /// running it again usually succeeds.
    static func runsAgainOnce(_ sqlState: String?) -> Bool {
        sqlState == "40001" || sqlState == "40P01"
    }

    private func postgresTransaction<T>(_ pool: PostgresPool, _ body: () throws -> T) throws -> T {
        do {
            precondition(pinned == nil, "nested store transaction")
            let connection: PostgresConnection
            do { connection = try pool.checkOut() } catch { throw StoreError(error) }
            pinned = connection
            activity.madeRoundTrips(2)   // BEGIN and COMMIT (or ROLLBACK)
            defer {
                pinned = nil
                pool.checkIn(connection)
            }
            do {
                return try connection.transaction(body)
            } catch let error as PostgresError {
                throw StoreError(error)
            }
        }
    }

    /// One row of a query's result, read by column index on either backend.
    enum Row {
        case sqlite(SQLiteConnection.Row)
        case postgres(PostgresRow)

        func string(_ column: Int32) -> String? {
            switch self {
            case .sqlite(let row): row.string(column)
            case .postgres(let row): row.string(column)
            }
        }

        func int(_ column: Int32) -> Int? {
            switch self {
            case .sqlite(let row): row.int(column)
            case .postgres(let row): row.int(column)
            }
        }

        func double(_ column: Int32) -> Double? {
            switch self {
            case .sqlite(let row): row.double(column)
            case .postgres(let row): row.double(column)
            }
        }

        /// A blob (bytea) column's bytes; empty when NULL.
        func blob(_ column: Int32) -> [UInt8] {
            switch self {
            case .sqlite(let row): row.blob(column)
            case .postgres(let row): row.blob(column)
            }
        }

        /// Parses a text column into a typed id; nil when NULL or unparsable.
        func id<T: LosslessStringConvertible>(_ column: Int32, as type: T.Type = T.self) -> T? {
            string(column).flatMap(T.init)
        }
    }
}
