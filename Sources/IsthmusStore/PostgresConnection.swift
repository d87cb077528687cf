private import CPostgres
#if canImport(Glibc)
import Glibc
#endif

/// One PostgreSQL session over libpq. Not thread-safe: used by one thread at a time (the store's, or whoever took it
/// from a ``PostgresPool``), and internal to this target so nothing else can reach it. Every call blocks the calling
/// thread on network I/O.
///
/// It mirrors ``SQLiteConnection`` so the store can drive either through one wrapper: the same `?` placeholders
/// (translated once by ``PostgresPlaceholders``), the same ``SQLValue`` parameters and the same row-reading API
/// (``PostgresRow``). Statements with parameters are prepared once per session (`PQprepare`, cached by SQL text) and
/// run with `PQexecPrepared`; a replaced connection starts with an empty cache and prepares again on first use.
/// TLS, authentication and host selection are libpq's, driven by the URL (`sslmode=verify-full&sslrootcert=…` works
/// as libpq documents).
final class PostgresConnection {
    let handle: OpaquePointer
    private var statements: [StatementKey: PreparedStatement] = [:]
    /// Statements prepared on this session so far (each a round trip of its own: `PQprepare`).
    private(set) var statementsPrepared = 0
    /// How many times the statement cache started over (``statementCacheLimit``): a statement prepared before a
    /// reset is gone from the server.
    private(set) var statementCacheResets = 0

    /// At most this many prepared statements per session; the cache starts over (`DEALLOCATE ALL`) beyond it, so SQL
    /// built at run time cannot grow the server's memory without bound.
    static let statementCacheLimit = 512

    /// Settings applied unless the URL sets them (PostgreSQL "libpq → Parameter Key Words"): our application name
    /// (`fallback_application_name` gives way to a URL's `application_name` by itself), a 10 s connect timeout, and TCP
    /// keepalives after 10 s idle, every 5 s, 3 probes, so that a database that vanished without closing the
    /// connection is noticed within about 25 s even while idle.
    ///
    /// `idle_in_transaction_session_timeout=5s`: a host that dies (no FIN, no RST) in the middle of a transaction
    /// would otherwise keep its session, and the `FOR SHARE` lock every fenced write holds on the lease row, until the
    /// server's own TCP keepalive gives up (about 2 h by default), and no standby could take the lease meanwhile. The
    /// store's transactions never wait on anything but their own statements, so 5 s idle inside one means the client
    /// is gone. With it, a dead holder's lock outlives its lease (which its fence requires to be live when the
    /// transaction starts) by at most 5 s: the take-over is delayed by at most that, while the standby's acquire gives
    /// up after 1 s each poll (``Store/tryAcquireLease(owner:ttl:)``) and tries again. Shorter would risk ending a
    /// healthy session stalled by its own host for a few seconds; the URL may set its own `options`.
    static let defaultParameters: [(String, String)] = [
        ("fallback_application_name", "isthmus"),
        ("connect_timeout", "10"),
        ("keepalives", "1"),
        ("keepalives_idle", "10"),
        ("keepalives_interval", "5"),
        ("keepalives_count", "3"),
        ("options", "-c idle_in_transaction_session_timeout=5s"),
        // With several hosts in the URL (a primary and its replicas), connect only to one that accepts writes: after
        // a database failover the old primary may come back read-only (its writes then fail with 25006, handled as a
        // lost connection: ``PostgresError/isConnectionState(_:)``).
        ("target_session_attrs", "read-write"),
    ]

    /// Connects. `url` is a libpq connection URI (`postgresql://user:pass@host:port/db?sslmode=…&connect_timeout=…`) or
    /// a `key=value` string. Blocks for at most the connect timeout per host; does network I/O.
    ///
    /// The URL goes to `PQconnectdbParams` as an expanded `dbname`: keywords before it are defaults the URL overrides
    /// (``defaultParameters``), keywords after it override the URL (`client_encoding=UTF8`, which the store relies on).
    /// That is libpq's documented way to combine the two, so the URL is never parsed or rewritten here.
    init(url: String) throws(PostgresError) {
        let password: String?
        do {
            password = try Self.validate(url)
        } catch {
            throw PostgresError(sqlState: nil, message: error.description, sql: nil, isConnectionFailure: false)
        }
        let parameters = Self.defaultParameters + [("dbname", url), ("client_encoding", "UTF8")]
        let keywords = parameters.map { strdup($0.0) }
        let values = parameters.map { strdup($0.1) }
        defer { (keywords + values).forEach { free($0) } }
        let connection = (keywords.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { keywordPointers in
            (values.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { valuePointers in
                PQconnectdbParams(keywordPointers.baseAddress, valuePointers.baseAddress, 1)
            }
        }
        guard let connection else {
            throw PostgresError(sqlState: nil, message: "libpq could not allocate a connection", sql: nil,
                                isConnectionFailure: true)
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.scrubbed(Self.trimmed(PQerrorMessage(connection)), url: url, password: password)
            PQfinish(connection)
            throw PostgresError(sqlState: nil, message: "cannot connect to PostgreSQL: \(message)", sql: nil,
                                isConnectionFailure: true)
        }
        // libpq prints NOTICEs (e.g. "relation … already exists, skipping") to stderr by default; the store has no use
        // for them and its logger is not reachable from a C callback without a context object, so they are dropped.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
    }

    deinit {
        PQfinish(handle)
    }

    /// The connection is unusable (libpq's status is no longer `CONNECTION_OK`): the owner must replace it. Reads
    /// libpq's state only; a server that went away while the connection was idle shows here after the next call
    /// or ``pollConnection()``.
    var isBroken: Bool { mustReconnect || PQstatus(handle) != CONNECTION_OK || PQpipelineStatus(handle) != PQ_PIPELINE_OFF }
    /// Set when the server answered with a connection-class SQLSTATE on a session libpq still deems fine (`25006`:
    /// the server turned read-only): the pool closes this connection instead of reusing it.
    private(set) var mustReconnect = false

    /// Marks the connection unusable: the pool closes it instead of handing it out again.
    func markBroken() { mustReconnect = true }

    /// Reads whatever the server sent while the connection was idle (without blocking: libpq's socket is
    /// non-blocking at the OS level) so that a terminated session or a closed socket shows in ``isBroken``.
    /// Returns true while the connection is usable.
    func pollConnection() -> Bool {
        // One read takes what is buffered (a terminated session's FATAL message); libpq sees the end of the stream
        // only on the next read. Each call reads once and never blocks, so three calls cover message, then EOF.
        for _ in 0..<3 where PQconsumeInput(handle) == 1 {}
        return !isBroken
    }

    /// A transaction is open (possibly failed) on this session (libpq's transaction status is not `PQTRANS_IDLE`).
    /// Reads libpq's state only.
    var isInTransaction: Bool { PQtransactionStatus(handle) != PQTRANS_IDLE }

    /// The server's process id for this session (for `pg_terminate_backend` in tests and diagnostics).
    var backendPID: Int32 { PQbackendPID(handle) }

    /// Runs one or more statements without parameters (schema, `BEGIN`/`COMMIT`) with `PQexec`. A `COMMIT` that the
    /// server answers with `ROLLBACK` (the transaction had failed) throws `25P02`. Blocks; does network I/O.
    func execute(_ sql: String) throws(PostgresError) {
        let result = try check(PQexec(handle, sql), sql: sql)
        defer { PQclear(result) }
        if Self.isCommit(sql), let status = PQcmdStatus(result), String(cString: status) == "ROLLBACK" {
            throw PostgresError(sqlState: "25P02", message: "the transaction was rolled back: a statement in it had failed",
                                sql: sql, isConnectionFailure: false)
        }
    }

    /// Runs a statement with `?` placeholders; returns how many rows it changed (`PQcmdTuples`, 0 when the command
    /// reports none). Blocks; does network I/O.
    @discardableResult
    func run(_ sql: String, _ parameters: [SQLValue]) throws(PostgresError) -> Int {
        let result = try executePrepared(sql, parameters)
        defer { PQclear(result) }
        return Self.changedRows(result)
    }

    /// How many rows a command changed (`PQcmdTuples`; 0 when the command reports no count). No I/O.
    static func changedRows(_ result: OpaquePointer) -> Int {
        guard var digit = PQcmdTuples(result) else { return 0 }  // "" when the command reports no count
        var count = 0
        while digit.pointee >= CChar(UInt8(ascii: "0")) && digit.pointee <= CChar(UInt8(ascii: "9")) {
            count = count * 10 + Int(digit.pointee - CChar(UInt8(ascii: "0")))
            digit += 1
        }
        return count
    }

    /// Runs a query with `?` placeholders and maps each row. The row is valid only inside `map`. Blocks; does
    /// network I/O.
    func query<T>(_ sql: String, _ parameters: [SQLValue], map: (PostgresRow) throws -> T) throws -> [T] {
        let result = try executePrepared(sql, parameters)
        defer { PQclear(result) }
        let count = PQntuples(result)
        var rows: [T] = []
        rows.reserveCapacity(Int(count))
        for row in 0..<count { rows.append(try map(PostgresRow(result: result, row: row))) }
        return rows
    }

    /// Runs `body` between `BEGIN` and `COMMIT` (PostgreSQL's default isolation, read committed); `ROLLBACK` when it
    /// throws (a rollback that fails because the connection broke is ignored: the server rolls back a transaction whose
    /// session ended). Blocks; does network I/O.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    // MARK: Prepared statements

    private func executePrepared(_ sql: String, _ parameters: [SQLValue],
                                 isRetry: Bool = false) throws(PostgresError) -> OpaquePointer {
        let encoded = try PostgresParameters(parameters, sql: sql)
        let statement = try prepared(sql, byteaPositions: encoded.byteaPositions)
        guard statement.parameterCount == parameters.count else {
            throw PostgresError(sqlState: nil, message: "the statement has \(statement.parameterCount) placeholders "
                                + "but \(parameters.count) parameters were given", sql: sql, isConnectionFailure: false)
        }
        let result = encoded.withPointers { values, lengths, formats in
            PQexecPrepared(handle, statement.name, Int32(parameters.count), values, lengths, formats, 0)
        }
        do {
            return try check(result, sql: sql)
        } catch where error.sqlState == "0A000" && error.message.hasPrefix("cached plan must not change result type") {
            // The table changed shape under a cached `SELECT *` (a migration ran since it was prepared): forget the
            // statement so the next call prepares it again; outside a transaction, that call is this one.
            statements[StatementKey(sql: sql, byteaPositions: encoded.byteaPositions)] = nil
            try? execute("DEALLOCATE \(statement.name)")
            if isInTransaction { throw error }
            return try executePrepared(sql, parameters)
        } catch where error.sqlState == "26000" && !isRetry {
            // invalid_sql_statement_name: the session's prepared statements are gone (`DISCARD ALL`, e.g. by an
            // administrator or a session pooler's reset): forget them all and prepare again; outside a transaction,
            // this call retries once. (Transaction-mode poolers are not supported: docs/deploy.md.)
            statements.removeAll()
            if isInTransaction { throw error }
            return try executePrepared(sql, parameters, isRetry: true)
        }
    }

    /// The statement prepared for `sql` with bytea parameters at `byteaPositions` (their type is fixed at 17, bytea,
    /// so they travel in binary; every other parameter's type is left to the server, 0).
    func prepared(_ sql: String, byteaPositions: [Int]) throws(PostgresError) -> PreparedStatement {
        let key = StatementKey(sql: sql, byteaPositions: byteaPositions)
        if let cached = statements[key] { return cached }
        if statements.count >= Self.statementCacheLimit {
            try execute("DEALLOCATE ALL")
            statements.removeAll()
            statementCacheResets += 1
        }
        let translated = PostgresPlaceholders(translating: sql)
        var types = [Oid](repeating: 0, count: translated.count)
        for position in byteaPositions where position < types.count { types[position] = PostgresParameters.byteaOID }
        statementsPrepared += 1
        let statement = PreparedStatement(name: "isthmus_\(statementsPrepared)", parameterCount: translated.count)
        let result = PQprepare(handle, statement.name, translated.sql, Int32(translated.count), types.isEmpty ? nil : types)
        PQclear(try check(result, sql: sql))
        statements[key] = statement
        return statement
    }

    /// Drops every prepared statement, on the server too (`DEALLOCATE ALL`: after `26000` they are gone already, after
    /// a cached plan went stale they would stay), so the next use of each prepares it again.
    func forgetPreparedStatements() {
        try? execute("DEALLOCATE ALL")
        statements.removeAll()
        statementCacheResets += 1
    }

    /// Whether `error` says the session's prepared statements are gone (`26000`, after an administrator's `DISCARD
    /// ALL`) or one of them no longer fits its table (`0A000` "cached plan must not change result type", after a
    /// migration): preparing them again fixes it.
    static func isStalePreparedStatement(_ error: PostgresError) -> Bool {
        error.sqlState == "26000"
            || (error.sqlState == "0A000" && error.message.hasPrefix("cached plan must not change result type"))
    }

    private struct StatementKey: Hashable {
        let sql: String
        let byteaPositions: [Int]
    }

    struct PreparedStatement {
        let name: String
        let parameterCount: Int
    }

    // MARK: Errors

    /// Returns a successful result, or clears it and throws what went wrong.
    func check(_ result: OpaquePointer?, sql: String?) throws(PostgresError) -> OpaquePointer {
        guard let result else {
            throw PostgresError(sqlState: nil, message: Self.trimmed(PQerrorMessage(handle)), sql: sql, isConnectionFailure: true)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return result
        default:
            // PG_DIAG_* are character macros Swift does not import: 'C' is the SQLSTATE, 'M' the primary message,
            // 'D' the detail.
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            var message = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
                ?? Self.trimmed(PQresultErrorMessage(result))
            if let detail = PQresultErrorField(result, Int32(UInt8(ascii: "D"))) { message += " (\(String(cString: detail)))" }
            PQclear(result)
            let broken = state.map(PostgresError.isConnectionState) ?? true
            if broken { mustReconnect = true }
            // Not `isBroken`: inside a pipeline (which that counts as broken) a statement's own error is not the
            // connection's.
            throw PostgresError(sqlState: state, message: message, sql: sql,
                                isConnectionFailure: broken || mustReconnect || PQstatus(handle) != CONNECTION_OK)
        }
    }

    /// Parses `url` as libpq will (`PQconninfoParse`; no I/O) and returns its password (nil without one), so connect
    /// errors can be scrubbed of it. Throws ``InvalidURL`` naming the part libpq refused.
    static func validate(_ url: String) throws(InvalidURL) -> String? {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(url, &errorMessage) else {
            let message = errorMessage.map { String(cString: $0) } ?? ""
            if let errorMessage { PQfreemem(errorMessage) }
            throw InvalidURL(part: Self.partRefused(libpqMessage: message))
        }
        defer { PQconninfoFree(options) }
        var option = options
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == "password" { return option.pointee.val.map { String(cString: $0) } }
            option += 1
        }
        return nil
    }

    static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "unknown libpq error" }
        var text = String(cString: message)
        while text.last?.isNewline == true || text.last == " " { text.removeLast() }
        return text.isEmpty ? "unknown libpq error" : text
    }

    private static func isCommit(_ sql: String) -> Bool {
        let word = sql.drop { $0.isWhitespace }.prefix { $0.isLetter }.uppercased()
        return word == "COMMIT" || word == "END"
    }
}

/// One row of a ``PostgresConnection/query(_:_:map:)`` result, read by column index with the same API as
/// ``SQLiteConnection/Row`` (the typed reads are in `PostgresRow+Values.swift`). Valid only inside the `map` closure
/// (the result is cleared after it). Reads libpq's buffers in place (`PQgetvalue`/`PQgetlength`); no I/O.
struct PostgresRow {
    private let result: OpaquePointer
    private let row: Int32

    fileprivate init(result: OpaquePointer, row: Int32) {
        self.result = result
        self.row = row
    }

    /// Whether the column is SQL NULL.
    func isNull(_ column: Int32) -> Bool { PQgetisnull(result, row, column) != 0 }

    /// The column's PostgreSQL type (its OID: `bool` is 16, `bytea` 17, …).
    func columnType(_ column: Int32) -> UInt32 { PQftype(result, column) }

    /// The column's bytes as libpq returned them (text format); nil when NULL.
    func bytes(_ column: Int32) -> UnsafeBufferPointer<UInt8>? {
        guard PQgetisnull(result, row, column) == 0, let value = PQgetvalue(result, row, column) else { return nil }
        let count = Int(PQgetlength(result, row, column))
        return UnsafeRawPointer(value).withMemoryRebound(to: UInt8.self, capacity: count) {
            UnsafeBufferPointer(start: $0, count: count)
        }
    }
}
