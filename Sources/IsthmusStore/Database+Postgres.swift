extension Database {
    /// Runs `body` on the transaction's connection, or on a healthy one from the pool for a single statement. A
    /// broken connection is handed back to the pool (which replaces it), so the next call works once the server is
    /// back; this call fails with ``StoreError/Kind/unavailable``.
    func withPostgres<T>(_ body: (PostgresConnection) throws(PostgresError) -> T) throws(StoreError) -> T {
        guard case .postgres(let pool) = backend else { preconditionFailure("not a PostgreSQL database") }
        if let pinned {
            do { return try body(pinned) } catch { throw StoreError(error) }
        }
        do {
            let connection = try pool.checkOut()
            defer { pool.checkIn(connection) }
            return try body(connection)
        } catch {
            throw StoreError(error)
        }
    }

    /// ``withPostgres(_:)`` for bodies that may throw other errors too (a row mapper's); those pass through.
    func withPostgresRethrowing<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        guard case .postgres(let pool) = backend else { preconditionFailure("not a PostgreSQL database") }
        do {
            if let pinned { return try body(pinned) }
            let connection = try pool.checkOut()
            defer { pool.checkIn(connection) }
            return try body(connection)
        } catch let error as PostgresError {
            throw StoreError(error)
        }
    }

    /// The parameters as PostgreSQL takes them. A text value with a NUL character (which PostgreSQL's `text` cannot
    /// hold, while SQLite and both protocols can) has it replaced by U+FFFD: a hostile Matrix body must not make the
    /// store refuse every write it is part of.
    static func postgresValues(_ parameters: [any SQLiteBindable]) -> [SQLiteValue] {
        parameters.map { parameter in
            let value = parameter.sqliteValue
            if case .text(let text) = value, text.utf8.contains(0) {
                return .text(String(text.map { $0 == "\0" ? "\u{FFFD}" : $0 }))
            }
            return value
        }
    }
}

extension StoreError {
    /// A PostgreSQL failure in store terms (SQLSTATE classes: 08 connection, 23 integrity, 53 resources).
    init(_ error: PostgresError) {
        let kind: Kind
        if error.isConnectionFailure {
            kind = .unavailable
        } else if error.isDiskFull {
            kind = .diskFull
        } else if error.isUniqueViolation || error.sqlState?.hasPrefix("23") == true {
            kind = .constraint
        } else {
            kind = .other
        }
        self.init(kind, "\(error)")
    }
}
