import IsthmusCommon

/// `matrix_sync`: Matrix client mode's position in the account's `/sync` stream — the `next_batch` token after the
/// last batch whose events are in the inbox. Written in the commit that queues those events (a crash replays the
/// batch at most, and the inbox drops what it holds already), so nothing before the token is lost and nothing after it
/// is skipped. One row per account.
enum MatrixSyncTable {
    /// Migration 18.
    static let schema = """
        CREATE TABLE matrix_sync (
            account     TEXT PRIMARY KEY,
            next_batch  TEXT NOT NULL
        );
        """

    /// Sets the account's token inside the caller's transaction.
    static func save(_ token: String, account: UserID) -> PlannedStatement {
        PlannedStatement("""
            INSERT INTO matrix_sync (account, next_batch) VALUES (?, ?)
            ON CONFLICT (account) DO UPDATE SET next_batch = excluded.next_batch
            """, [account, token])
    }
}

/// What an intake records in the commit that queues its events: that a homeserver transaction was processed
/// (application service), or where the account's sync now stands (Matrix client mode).
public enum IntakeMark: Sendable, Equatable {
    case transaction(TransactionID)
    case syncPosition(String, account: UserID)
}

extension Store {
    /// Where `account`'s sync stands (nil: it never synced: the first sync starts from now).
    public func syncPosition(account: UserID) throws -> String? {
        try read { db in
            try db.query("SELECT next_batch FROM matrix_sync WHERE account = ?", account) { $0.string(0) }.first ?? nil
        }
    }

    /// Records `mark` on its own: a batch with nothing to keep. Durable when this returns.
    public func record(_ mark: IntakeMark) throws {
        try write { db in try Self.apply(mark, in: db) }
    }

    static func apply(_ mark: IntakeMark, in db: Database) throws {
        _ = try db.perform([statement(of: mark)])
    }

    /// What recording `mark` writes: one statement.
    static func statement(of mark: IntakeMark) -> PlannedStatement {
        switch mark {
        case .transaction(let id): AppServiceTransactionTable.markProcessed(id)
        case .syncPosition(let token, let account): MatrixSyncTable.save(token, account: account)
        }
    }
}
