import FoundationEssentials
import IsthmusCommon

/// `appservice_transactions`: homeserver transaction ids already processed, so a repeat is answered 200 and ignored.
enum AppServiceTransactionTable {
    static let schema = """
        CREATE TABLE appservice_transactions (
            txn_id       TEXT PRIMARY KEY,
            processed_at INTEGER NOT NULL DEFAULT (strftime('%s','now'))
        );
        """
    /// Migration 2 on PostgreSQL.
    static let postgresSchema = """
        CREATE TABLE appservice_transactions (
            txn_id       TEXT PRIMARY KEY,
            processed_at BIGINT NOT NULL DEFAULT (EXTRACT(EPOCH FROM now())::bigint)
        );
        """

    /// The database's clock in seconds since 1970, as `processed_at`'s default reads it.
    static func nowSeconds(_ dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite: "CAST(strftime('%s','now') AS INTEGER)"
        case .postgres: "EXTRACT(EPOCH FROM now())::bigint"
        }
    }

    /// Records `id` as processed inside the caller's transaction (idempotent).
    static func markProcessed(_ id: TransactionID) -> PlannedStatement {
        PlannedStatement("INSERT INTO appservice_transactions (txn_id) VALUES (?) ON CONFLICT DO NOTHING", [id])
    }
}

extension Store {
    /// Whether the homeserver transaction `id` was already processed.
    public func isTransactionProcessed(_ id: TransactionID) throws -> Bool {
        try read { db in
            try !db.query("SELECT 1 FROM appservice_transactions WHERE txn_id = ?", id) { _ in true }.isEmpty
        }
    }

    /// Records `id` as processed (idempotent), on its own: for a transaction with nothing to keep. Durable when this
    /// returns. A transaction with inbox entries is recorded with them, by ``enqueueInbox(_:markingProcessed:)``.
    public func markTransactionProcessed(_ id: TransactionID) throws {
        try write { db in _ = try db.perform([AppServiceTransactionTable.markProcessed(id)]) }
    }

    /// Forgets processed ids older than `seconds` (the homeserver stops retrying long before). The cutoff is taken
    /// from the database's clock, the one that stamped `processed_at` (on PostgreSQL another host's).
    public func pruneProcessedTransactions(olderThan seconds: Int) throws {
        try write { db in
            _ = try db.run("DELETE FROM appservice_transactions WHERE processed_at < "
                           + AppServiceTransactionTable.nowSeconds(db.dialect) + " - ?", seconds)
        }
    }
}
