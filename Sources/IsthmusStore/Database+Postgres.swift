import IsthmusCommon

extension Database {
    /// Runs `body` on the transaction's connection, or on a healthy one from the pool for a single statement. A
    /// broken connection is handed back to the pool (which replaces it), so the next call works once the server is
    /// back; this call fails with ``StoreError/Kind/unavailable``.
    func withPostgres<T>(_ body: (PostgresConnection) throws(PostgresError) -> T) throws(StoreError) -> T {
        guard case .postgres(let pool) = backend else { preconditionFailure("not a PostgreSQL database") }
        if let pinned {
            let before = pinned.statementsPrepared
            defer { countRoundTrips(on: pinned, preparedBefore: before) }
            do { return try body(pinned) } catch { throw StoreError(error) }
        }
        do {
            let connection = try pool.checkOut()
            let before = connection.statementsPrepared
            defer {
                countRoundTrips(on: connection, preparedBefore: before)
                pool.checkIn(connection)
            }
            return try body(connection)
        } catch {
            throw StoreError(error)
        }
    }

    /// ``withPostgres(_:)`` for bodies that may throw other errors too (a row mapper's); those pass through.
    func withPostgresRethrowing<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        guard case .postgres(let pool) = backend else { preconditionFailure("not a PostgreSQL database") }
        do {
            if let pinned {
                let before = pinned.statementsPrepared
                defer { countRoundTrips(on: pinned, preparedBefore: before) }
                return try body(pinned)
            }
            let connection = try pool.checkOut()
            let before = connection.statementsPrepared
            defer {
                countRoundTrips(on: connection, preparedBefore: before)
                pool.checkIn(connection)
            }
            return try body(connection)
        } catch let error as PostgresError {
            throw StoreError(error)
        }
    }

    /// Counts one statement's round trip, and one more for each statement it had to prepare first.
    private func countRoundTrips(on connection: PostgresConnection, preparedBefore: Int) {
        activity.madeRoundTrips(1 + connection.statementsPrepared - preparedBefore)
    }

    /// The parameters as PostgreSQL takes them. A text value with a NUL character (which PostgreSQL's `text` cannot
    /// hold, while SQLite and both protocols can) has it replaced by U+FFFD: a hostile Matrix body must not make the
    /// store refuse every write it is part of. Each such value is counted and reported, at most once a minute.
    func postgresValues(_ parameters: [any SQLBindable]) -> [SQLValue] {
        parameters.map { parameter in
            let value = parameter.sqlValue
            if case .text(let text) = value, text.utf8.contains(0) {
                if let count = hostileText.note(at: .now) {
                    logger.warning("Text with a NUL character stored with U+FFFD in its place (PostgreSQL text cannot hold NUL)",
                                   metadata: ["store.values_cleaned": "\(count)"])
                }
                return .text(String(text.map { $0 == "\0" ? "\u{FFFD}" : $0 }))
            }
            return value
        }
    }
}

/// The rate limit of ``Database``'s report of cleaned text: the first value is reported at once, later ones at most
/// once a minute with the number cleaned meanwhile. A value type; no I/O.
struct HostileTextLog {
    private var lastReport: ContinuousClock.Instant?
    private var unreported = 0

    /// Counts one cleaned value; returns the count to report now, or nil while the minute since the last report runs.
    mutating func note(at now: ContinuousClock.Instant) -> Int? {
        unreported += 1
        if let lastReport, now - lastReport < .seconds(60) { return nil }
        lastReport = now
        defer { unreported = 0 }
        return unreported
    }
}

extension StoreError {
    /// SQLSTATEs after which a later try may succeed although the connection is fine: `40001` serialization_failure
    /// and `40P01` deadlock_detected (the transaction is retried once first: ``Database/transaction(_:)``), `55P03`
    /// lock_not_available (a lock timeout), `57014` query_canceled (a statement timeout), and `53300`, which the pool
    /// also uses for "every connection stayed in use".
    static let transientStates: Set<String> = ["40001", "40P01", "55P03", "57014", "53300"]

    /// A PostgreSQL failure in store terms (SQLSTATE classes: 08 connection, 23 integrity, 53 resources).
    init(_ error: PostgresError) {
        let kind: Kind
        if error.isConnectionFailure || error.sqlState.map(Self.transientStates.contains) == true {
            kind = .unavailable
        } else if error.isDiskFull {
            kind = .diskFull
        } else if error.isUniqueViolation || error.sqlState?.hasPrefix("23") == true {
            kind = .constraint
        } else {
            kind = .other
        }
        self.init(kind, "\(error)")
        sqlState = error.sqlState
    }
}
