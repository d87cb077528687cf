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
    /// and `COMMIT` sent together). A serialization failure or a deadlock runs it once more, as ``transaction(_:)``
    /// does. Throws when the database cannot be reached or the commit fails. Blocks on I/O.
    func pipelinedTransaction(_ statements: [PlannedStatement]) throws(StoreError) -> PipelineOutcome {
        guard case .postgres(let pool) = backend, pinned == nil else { preconditionFailure("pipelining needs PostgreSQL, outside a transaction") }
        let pipelined = statements.map {
            PostgresConnection.PipelinedStatement(sql: $0.sql, parameters: postgresValues($0.parameters), columns: $0.columns)
        }
        var retried = false
        while true {
            for _ in statements { activity.ranStatement() }
            activity.madeRoundTrips(1)
            let outcome: PostgresConnection.PipelineOutcome
            do {
                let connection = try pool.checkOut()
                defer { pool.checkIn(connection) }
                outcome = try connection.pipelinedTransaction(pipelined)
            } catch {
                throw StoreError(error)
            }
            switch outcome {
            case .committed(let results):
                activity.committed()
                return .committed(results)
            case .failed(let index, let error):
                if !retried && (error.sqlState == "40001" || error.sqlState == "40P01") {
                    retried = true
                    continue
                }
                return .failed(index: index, StoreError(error))
            }
        }
    }
}
