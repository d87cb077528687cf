private import CPostgres
#if canImport(Glibc)
import Glibc
#endif

/// A whole transaction in one round trip (issue 26): `BEGIN`, the statements and `COMMIT` sent together in libpq's
/// pipeline mode (libpq 14+), then every result read. A group commit of ten writes was twelve round trips, each a
/// wake-up of the server's process and of the store's thread; now it is one.
///
/// libpq, not hand-written protocol code: pipeline mode is its documented API ("Pipeline Mode" in the libpq chapter).
/// What is hand-written here is the loop that sends without blocking while reading what the server already answered,
/// which the libpq documentation asks for so that neither side's buffers can fill up and stall both.
extension PostgresConnection {
    /// One statement of a pipelined transaction: `?` placeholders, and how many columns of each row to read as text.
    struct PipelinedStatement {
        let sql: String
        let parameters: [SQLValue]
        let columns: Int32
    }

    /// How a pipelined transaction ended.
    enum PipelineOutcome {
        /// Committed; each statement's result, in order.
        case committed([PlannedResult])
        /// The statement at `index` failed: the server skipped the rest and the transaction was rolled back, so
        /// nothing of it is written. After a connection-class error the connection is marked broken; otherwise it is
        /// idle and usable again.
        case failed(index: Int, PostgresError)
    }

    /// Runs `statements` between `BEGIN` and `COMMIT` in one round trip. Throws (the connection then needs replacing)
    /// when the connection fails or the server answers out of turn; a statement's own error is ``PipelineOutcome/failed(index:_:)``.
    /// Blocks; does network I/O.
    func pipelinedTransaction(_ statements: [PipelinedStatement]) throws(PostgresError) -> PipelineOutcome {
        let names: [String]
        let encoded: [PostgresParameters]
        switch try prepareAll(statements) {
        case .prepared(let preparedNames, let parameters): (names, encoded) = (preparedNames, parameters)
        case .refused(let index, let error): return .failed(index: index, error)
        }
        // Until the results are read and pipeline mode is left, the connection is mid-protocol: if anything throws
        // before that, the pool must not hand it out again.
        var leftPipeline = false
        defer { if !leftPipeline { markBroken() } }
        guard PQenterPipelineMode(handle) == 1 else { throw failure("could not enter pipeline mode") }
        try send(statements, names: names, encoded: encoded)
        var results: [PlannedResult] = []
        results.reserveCapacity(statements.count)
        var failed: (index: Int, error: PostgresError)?
        if let error = try readCommand(sql: "BEGIN", columns: 0).error {
            failed = (-1, error)   // BEGIN itself refused: nothing ran
        }
        for (index, statement) in statements.enumerated() {
            let (result, error) = try readCommand(sql: statement.sql, columns: statement.columns)
            if let error, failed == nil { failed = (index, error) }
            results.append(result)
        }
        var commitError = try readCommand(sql: "COMMIT", columns: 0).error
        guard let sync = PQgetResult(handle) else { throw failure("the pipeline ended before its sync point") }
        let status = PQresultStatus(sync)
        PQclear(sync)
        guard status == PGRES_PIPELINE_SYNC, PQexitPipelineMode(handle) == 1 else {
            throw failure("the pipeline did not end at its sync point")
        }
        leftPipeline = true
        if let (index, error) = failed {
            // The transaction is open and failed (or never began): end it so the connection is idle again.
            try? execute("ROLLBACK")
            if index < 0 { throw error }
            if Self.isStalePreparedStatement(error) { forgetPreparedStatements() }
            return .failed(index: index, error)
        }
        if commitError == nil, isInTransaction { commitError = failure("the transaction is still open after COMMIT") }
        if let commitError { throw commitError }
        return .committed(results)
    }

    private enum Preparation {
        case prepared(names: [String], parameters: [PostgresParameters])
        /// The statement at `index` cannot run (the server refused to prepare it, or a parameter cannot be sent):
        /// nothing was sent, the connection is as it was.
        case refused(index: Int, PostgresError)
    }

    /// Prepares every statement first (`PQprepare` waits for its answer, which pipeline mode does not allow). Starts
    /// over once if the cache was reset meanwhile, which dropped the statements prepared before it. Throws when the
    /// connection fails.
    private func prepareAll(_ statements: [PipelinedStatement]) throws(PostgresError) -> Preparation {
        var encoded: [PostgresParameters] = []
        encoded.reserveCapacity(statements.count)
        for (index, statement) in statements.enumerated() {
            do { encoded.append(try PostgresParameters(statement.parameters, sql: statement.sql)) } catch {
                return .refused(index: index, error)
            }
        }
        for _ in 0..<2 {
            let resets = statementCacheResets
            var names: [String] = []
            names.reserveCapacity(statements.count)
            for (index, (statement, parameters)) in zip(statements, encoded).enumerated() {
                let prepared: PreparedStatement
                do { prepared = try self.prepared(statement.sql, byteaPositions: parameters.byteaPositions) } catch {
                    if error.isConnectionFailure { throw error }
                    return .refused(index: index, error)
                }
                guard prepared.parameterCount == statement.parameters.count else {
                    return .refused(index: index, PostgresError(
                        sqlState: nil, message: "the statement has \(prepared.parameterCount) placeholders but "
                            + "\(statement.parameters.count) parameters were given", sql: statement.sql, isConnectionFailure: false))
                }
                names.append(prepared.name)
            }
            if statementCacheResets == resets { return .prepared(names: names, parameters: encoded) }
        }
        throw PostgresError(sqlState: nil, message: "a transaction's statements do not fit the statement cache", sql: nil,
                            isConnectionFailure: false)
    }

    /// Queues `BEGIN`, the statements, `COMMIT` and the sync point, and sends them all without blocking on a full
    /// socket while the server's answers wait to be read.
    private func send(_ statements: [PipelinedStatement], names: [String], encoded: [PostgresParameters]) throws(PostgresError) {
        guard PQsetnonblocking(handle, 1) == 0 else { throw failure("could not make the connection non-blocking") }
        defer { PQsetnonblocking(handle, 0) }
        guard PQsendQueryParams(handle, "BEGIN", 0, nil, nil, nil, nil, 0) == 1 else { throw failure("could not queue BEGIN") }
        for (index, statement) in statements.enumerated() {
            let queued = encoded[index].withPointers { values, lengths, formats in
                PQsendQueryPrepared(handle, names[index], Int32(statement.parameters.count), values, lengths, formats, 0)
            }
            guard queued == 1 else { throw failure("could not queue a statement", sql: statement.sql) }
            try flush(untilEmpty: false)
        }
        guard PQsendQueryParams(handle, "COMMIT", 0, nil, nil, nil, nil, 0) == 1, PQpipelineSync(handle) == 1 else {
            throw failure("could not queue COMMIT")
        }
        try flush(untilEmpty: true)
    }

    /// Writes what libpq has queued. When the socket is full, waits until it can write or read, and reads what the
    /// server sent meanwhile (libpq keeps it for ``readCommand(sql:columns:)``), so the server never waits on us.
    /// `untilEmpty: false` returns as soon as a write would block and nothing can be read.
    private func flush(untilEmpty: Bool) throws(PostgresError) {
        while true {
            let flushed = PQflush(handle)
            if flushed == 0 { return }
            guard flushed == 1 else { throw failure("could not send to the server") }
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN | POLLOUT), revents: 0)
            let ready = poll(&descriptor, 1, untilEmpty ? -1 : 0)
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else { throw failure("could not wait for the server") }
            if descriptor.revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 {
                guard PQconsumeInput(handle) == 1 else { throw failure("could not read from the server") }
            }
            if ready == 0 && !untilEmpty { return }
        }
    }

    /// Reads one queued command's results up to its end: the rows' first `columns` columns, and its error (a failed
    /// statement; nil when it succeeded or was skipped after an earlier failure). Throws when the connection fails.
    private func readCommand(sql: String, columns: Int32) throws(PostgresError) -> (PlannedResult, error: PostgresError?) {
        guard let first = PQgetResult(handle) else { throw failure("a pipelined command had no result", sql: sql) }
        var result = PlannedResult(rows: [], changed: 0)
        var error: PostgresError?
        switch PQresultStatus(first) {
        case PGRES_PIPELINE_ABORTED:
            PQclear(first)
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
            result = Self.read(first, columns: columns)
            if sql == "COMMIT", let status = PQcmdStatus(first), String(cString: status) == "ROLLBACK" {
                error = PostgresError(sqlState: "25P02", message: "the transaction was rolled back", sql: sql, isConnectionFailure: false)
            }
            PQclear(first)
        default:
            do { PQclear(try check(first, sql: sql)) } catch let failed { error = failed }
        }
        // Each command's results end with a null result.
        while let extra = PQgetResult(handle) { PQclear(extra) }
        if PQstatus(handle) != CONNECTION_OK { throw failure("the connection to the server was lost", sql: sql) }
        return (result, error)
    }

    /// A result's rows (their first `columns` columns, as text) and its change count. No I/O.
    private static func read(_ result: OpaquePointer, columns: Int32) -> PlannedResult {
        let count = PQntuples(result)
        let columns = min(columns, PQnfields(result))
        var rows: [[String?]] = []
        rows.reserveCapacity(Int(count))
        for row in 0..<count {
            rows.append((0..<columns).map { column in
                PQgetisnull(result, row, column) != 0 ? nil : PQgetvalue(result, row, column).map { String(cString: $0) }
            })
        }
        return PlannedResult(rows: rows, changed: PQresultStatus(result) == PGRES_TUPLES_OK ? Int(count) : changedRows(result))
    }

    /// A failure of the connection itself, with libpq's message.
    private func failure(_ what: String, sql: String? = nil) -> PostgresError {
        PostgresError(sqlState: nil, message: "\(what): \(Self.trimmed(PQerrorMessage(handle)))", sql: sql, isConnectionFailure: true)
    }
}
