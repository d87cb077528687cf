import IsthmusCommon

/// One statement of a write whose statements are all known before any of them runs (issue 26): none needs the
/// result of one before it. A commit group made only of such writes goes to PostgreSQL in one round trip (libpq's
/// pipeline mode: ``Database/pipelinedTransaction(_:)``); anywhere else they run one after another
/// (``Database/perform(_:)``), with the same results.
struct PlannedStatement {
    let sql: String
    let parameters: [any SQLBindable]
    /// How many columns of each row it returns (`RETURNING …`) are read, as text; 0 for none (only the change count).
    let columns: Int32

    init(_ sql: String, _ parameters: [any SQLBindable], columns: Int32 = 0) {
        self.sql = sql
        self.parameters = parameters
        self.columns = columns
    }
}

/// What a ``PlannedStatement`` returned: the first `columns` columns of each row as text (nil for NULL; integers in
/// decimal), and how many rows it changed.
struct PlannedResult: Equatable {
    var rows: [[String?]]
    var changed: Int
}

/// A write given as statements up front (``PlannedStatement``) and what its writer gets from their results.
struct PlannedWrite<T> {
    var statements: [PlannedStatement]
    /// Reads the statements' results, one per statement in order. Runs after the commit when pipelined: it must not
    /// fail (what it cannot read, it leaves out).
    var result: ([PlannedResult]) -> T
}

extension PlannedWrite where T == Void {
    /// A write whose writer needs nothing back.
    init(_ statements: [PlannedStatement]) {
        self.init(statements: statements) { _ in () }
    }
}

extension Database {
    /// Runs `statements` one after another (in the caller's transaction, if any) and returns their results.
    func perform(_ statements: [PlannedStatement]) throws -> [PlannedResult] {
        try statements.map { statement in
            guard statement.columns > 0 else {
                return PlannedResult(rows: [], changed: try run(statement.sql, statement.parameters))
            }
            let rows = try query(statement.sql, statement.parameters) { row in (0..<statement.columns).map { row.string($0) } }
            return PlannedResult(rows: rows, changed: rows.count)
        }
    }

    /// ``perform(_:)`` of a whole planned write: its writer's result.
    func perform<T>(_ write: PlannedWrite<T>) throws -> T {
        write.result(try perform(write.statements))
    }
}
