/// Statements with parameters given as an array, and columns read as typed values: what ``StoreCopy`` needs to
/// move tables whose columns it discovers at run time (the tables' own files bind typed Swift values instead).
extension Database {
    /// ``run(_:_:)`` with the parameters as an array. Blocks on I/O.
    @discardableResult
    func run(_ sql: String, values: [SQLValue]) throws(StoreError) -> Int {
        switch backend {
        case .sqlite(let connection):
            do { return try connection.run(sql, parameters: values) } catch { throw StoreError(error) }
        case .postgres:
            let converted = postgresValues(values)
            return try withPostgres { connection throws(PostgresError) in try connection.run(sql, converted) }
        }
    }

    /// ``query(_:_:map:)`` with the parameters as an array. Blocks on I/O.
    func query<T>(_ sql: String, values: [SQLValue], map: (Row) throws -> T) throws -> [T] {
        switch backend {
        case .sqlite(let connection):
            do {
                return try connection.query(sql, parameters: values) { try map(.sqlite($0)) }
            } catch let error as SQLiteError {
                throw StoreError(error)
            }
        case .postgres:
            let converted = postgresValues(values)
            return try withPostgresRethrowing { connection in
                try connection.query(sql, converted) { try map(.postgres($0)) }
            }
        }
    }
}

extension Database.Row {
    /// A column as a typed value: SQLite's storage class of the value, or PostgreSQL's column type
    /// (``PostgresRow/value(_:)``). No I/O.
    func value(_ column: Int32) -> SQLValue {
        switch self {
        case .sqlite(let row): row.value(column)
        case .postgres(let row): row.value(column)
        }
    }
}
