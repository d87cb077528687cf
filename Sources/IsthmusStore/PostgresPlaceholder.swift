import IsthmusCommon
// PLACEHOLDER until branch p1 (the libpq connection) is merged: the API P1 announced, so the store compiles.
// Deleted by the merge commit.
final class PostgresConnection {
    init(url: String) throws(PostgresError) { throw PostgresError(sqlState: nil, message: "PostgreSQL support is not built in", sql: nil) }
    func execute(_ sql: String) throws(PostgresError) {}
    @discardableResult func run(_ sql: String, _ parameters: [SQLiteValue]) throws(PostgresError) -> Int { 0 }
    func query<T>(_ sql: String, _ parameters: [SQLiteValue], map: (PostgresRow) throws -> T) throws -> [T] { [] }
    func transaction<T>(_ body: () throws -> T) throws -> T { try body() }
    var isBroken: Bool { true }
}
struct PostgresRow {
    func string(_ column: Int32) -> String? { nil }
    func int(_ column: Int32) -> Int? { nil }
    func double(_ column: Int32) -> Double? { nil }
    func blob(_ column: Int32) -> [UInt8] { [] }
}
public struct PostgresError: Error, CustomStringConvertible {
    var sqlState: String?
    var message: String
    var sql: String?
    var isConnectionFailure: Bool { true }
    var isUniqueViolation: Bool { false }
    var isDiskFull: Bool { false }
    public var description: String { message }
}
final class PostgresPool: Sendable {
    init(url: String, size: Int = 2, logger: Logger = .disabled) {}
    func checkOut(waitingAtMost timeout: Duration = .seconds(30)) throws(PostgresError) -> PostgresConnection { throw PostgresError(sqlState: nil, message: "no", sql: nil) }
    func checkIn(_ connection: PostgresConnection) {}
}
