import IsthmusCommon

extension Database {
    /// How a pipelined transaction ended (``pipelinedTransaction(_:)``).
    enum PipelineOutcome {
        /// Committed; each statement's result, in order.
        case committed([PlannedResult])
        /// The statement at `index` failed and the transaction was rolled back: nothing of it is written.
        case failed(index: Int, StoreError)
    }

    /// Whether ``pipelinedTransaction(_:)`` can run here: PostgreSQL, outside any transaction.
    var canPipeline: Bool {
        guard case .postgres = backend else { return false }
        return pinned == nil
    }

    /// Runs `statements` as one transaction in one round trip (PostgreSQL's pipeline mode: `BEGIN`, the statements
    /// and `COMMIT` sent together; statements the session has not prepared yet are prepared first, a round trip each).
    /// A serialization failure or a deadlock runs it once more, as ``transaction(_:)`` does, and so do prepared
    /// statements the session lost (prepared again first). Throws when the database cannot be reached, the commit
    /// fails, the server refuses `BEGIN`, or the statements do not fit the session's statement cache. Blocks on I/O.
    func pipelinedTransaction(_ statements: [PlannedStatement]) throws(StoreError) -> PipelineOutcome {
        guard case .postgres(let pool) = backend, pinned == nil else { preconditionFailure("pipelining needs PostgreSQL, outside a transaction") }
        let pipelined = statements.map {
            PostgresConnection.PipelinedStatement(sql: $0.sql, parameters: postgresValues($0.parameters), columns: $0.columns)
        }
        var retried = false
        while true {
            for _ in statements { activity.ranStatement() }
            let outcome: PostgresConnection.PipelineOutcome
            do {
                let connection = try pool.checkOut()
                let prepared = connection.statementsPrepared
                var failed = false
                defer {
                    // The pipeline, and each statement prepared for it; a failed one's ROLLBACK is one more.
                    activity.madeRoundTrips(1 + connection.statementsPrepared - prepared + (failed ? 1 : 0))
                    pool.checkIn(connection)
                }
                outcome = try connection.pipelinedTransaction(pipelined)
                if case .failed = outcome { failed = true }
            } catch {
                throw StoreError(error)
            }
            switch outcome {
            case .committed(let results):
                activity.committed()
                return .committed(results)
            case .failed(let index, let error):
                if !retried && (Self.runsAgainOnce(error.sqlState) || PostgresConnection.isStalePreparedStatement(error)) {
                    retried = true
                    continue
                }
                return .failed(index: index, StoreError(error))
            }
        }
    }
}
