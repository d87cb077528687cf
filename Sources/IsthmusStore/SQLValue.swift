/// A value bound to or read from a statement, on either backend (SQLite binds it natively; ``PostgresParameters``
/// converts it to PostgreSQL's text or binary form).
enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// Converts Swift values to statement parameters.
protocol SQLBindable {
    var sqlValue: SQLValue { get }
}
extension String: SQLBindable { var sqlValue: SQLValue { .text(self) } }
extension Int: SQLBindable { var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Int64: SQLBindable { var sqlValue: SQLValue { .integer(self) } }
extension Double: SQLBindable { var sqlValue: SQLValue { .real(self) } }
extension Bool: SQLBindable { var sqlValue: SQLValue { .integer(self ? 1 : 0) } }
extension SQLValue: SQLBindable { var sqlValue: SQLValue { self } }
extension Optional: SQLBindable where Wrapped: SQLBindable {
    var sqlValue: SQLValue { self?.sqlValue ?? .null }
}
extension LosslessStringConvertible where Self: SQLBindable {
    var sqlValue: SQLValue { .text(description) }
}
