/// A failed store call, the same on both backends: what kind of failure (so callers can act on it without knowing
/// whether SQLite or PostgreSQL runs) and the backend's own message. Nothing outside IsthmusStore sees `SQLiteError`
/// or `PostgresError`: ``Database`` maps them to this at the boundary.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as far as a caller can act on it.
    public enum Kind: Sendable, Equatable {
        /// No room for the write: the disk (or SQLite's `max_page_count`, or PostgreSQL's tablespace) is full.
        case diskFull
        /// A constraint (unique, not-null, check) refused the write.
        case constraint
        /// The database cannot be reached now: a lost or refused PostgreSQL connection, or SQLite still locked by
        /// another process after the busy timeout. Retrying later may succeed.
        case unavailable
        /// A schema this binary does not know (a newer version wrote it): refuse to run on it.
        case unknownSchema
        /// Anything else (a bug, a corrupt file, …).
        case other
    }

    public var kind: Kind
    /// The backend's message, with the statement that failed when there is one (never a password).
    public var message: String
    /// PostgreSQL's SQLSTATE when the server sent one (nil on SQLite), for the few callers inside the store that
    /// react to one code (`55P03` lock_not_available in the lease's acquire).
    var sqlState: String?

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    /// The write failed for want of room (``Kind/diskFull``).
    public var isDiskFull: Bool { kind == .diskFull }
}

extension StoreError {
    /// A SQLite failure in store terms.
    init(_ error: SQLiteError) {
        let kind: Kind = switch error.code.primary {
        case .full: .diskFull
        case .constraint: .constraint
        case .busy, .locked: .unavailable
        default: .other
        }
        self.init(kind, error.description)
    }
}
