/// A failed PostgreSQL call (libpq), with the server's SQLSTATE when it sent one and the statement that failed.
///
/// SQLSTATE codes are PostgreSQL's (Appendix A, "PostgreSQL Error Codes"); the helpers below name the ones the store
/// reacts to. `message` is libpq's or the server's text; it never contains the connection URL (which may hold a
/// password).
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// The five-character SQLSTATE, e.g. `23505` unique_violation; nil when the server sent none (the connection
    /// failed, or libpq refused the call before sending it).
    public var sqlState: String?
    /// What went wrong, from libpq or the server (without a trailing newline).
    public var message: String
    /// The statement that failed (nil for connecting).
    public var sql: String?
    /// The connection broke: no SQLSTATE came back, the SQLSTATE is of class 08 (connection exception) or 57P01–57P03
    /// (the server shut down or cannot accept connections), or libpq reports the connection bad. The owner must
    /// replace the connection; whether the failed statement took effect is unknown.
    public var isConnectionFailure: Bool

    public init(sqlState: String?, message: String, sql: String?, isConnectionFailure: Bool) {
        self.sqlState = sqlState
        self.message = message
        self.sql = sql
        self.isConnectionFailure = isConnectionFailure
    }

    /// `23505`: a unique or primary-key constraint refused the row.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// `53100`: the server's disk is full (class 53 is "insufficient resources").
    public var isDiskFull: Bool { sqlState == "53100" }
    /// `40001` serialization_failure or `40P01` deadlock_detected: running the transaction again may succeed.
    public var isRetryableTransactionFailure: Bool { sqlState == "40001" || sqlState == "40P01" }
    /// Class 08 (connection exception), `57P01`–`57P03` (admin/crash shutdown, cannot connect now), or `25006`
    /// read_only_sql_transaction: the session reached a server that no longer takes writes (a demoted primary after a
    /// database failover), so the connection is dropped and the next one, with `target_session_attrs=read-write`,
    /// finds the new primary.
    static func isConnectionState(_ state: String) -> Bool {
        state.hasPrefix("08") || state == "57P01" || state == "57P02" || state == "57P03" || state == "25006"
    }

    public var description: String {
        "PostgreSQL error" + (sqlState.map { " \($0)" } ?? "") + ": \(message)"
            + (sql.map { " (in: \($0.prefix(120)))" } ?? "")
    }
}
