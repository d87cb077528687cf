/// A numbered schema change. Applied once, in order, inside a transaction, and recorded in `schema_migrations`.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    public let sql: String
}

/// The store's schema history. Append new migrations; never edit an applied one.
enum Migrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "room links", sql: RoomLinkTable.schema),
        Migration(version: 2, name: "appservice transactions", sql: AppServiceTransactionTable.schema),
        Migration(version: 3, name: "bridge state", sql: GhostTable.schema + PuppetTable.schema + MessageMapTable.schema
                  + RoomStateTable.schema + MatrixInboxTable.schema),
        Migration(version: 4, name: "room archive capability", sql: RoomLinkTable.archiveColumn),
        Migration(version: 5, name: "rich messages", sql: MessageMapTable.richColumns + ReactionTable.schema),
        Migration(version: 6, name: "invited rooms", sql: InvitedRoomTable.schema),
        Migration(version: 7, name: "direct chats", sql: DirectChatTable.schema),
        Migration(version: 8, name: "matrix moderators to MUC", sql: RoomLinkTable.matrixModeratorsColumn),
        Migration(version: 9, name: "bridge secrets", sql: BridgeSecretTable.schema),
        Migration(version: 10, name: "room subject and name", sql: RoomLinkTable.syncNameColumn + RoomStateTable.textColumns),
        Migration(version: 11, name: "avatars", sql: AvatarTable.schema),
        Migration(version: 12, name: "room avatar", sql: RoomAvatarColumns.schema),
        Migration(version: 13, name: "bridge lease", sql: LeaseTable.schema),
    ]

    /// Applies the migrations not yet recorded; returns the versions applied now.
    ///
    /// A pending migration is checked again inside its own `BEGIN IMMEDIATE` transaction, so two processes opening a
    /// new file at once (the CLI beside `serve`) apply it once: the second waits for the lock, then sees it recorded.
    static func apply(_ migrations: [Migration], to connection: SQLiteConnection) throws -> [Int] {
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version INTEGER PRIMARY KEY,
                name TEXT NOT NULL,
                applied_at INTEGER NOT NULL DEFAULT (strftime('%s','now'))
            )
            """)
        let done = Set(try connection.query("SELECT version FROM schema_migrations") { $0.int(0) ?? 0 })
        var applied: [Int] = []
        for migration in migrations.sorted(by: { $0.version < $1.version }) where !done.contains(migration.version) {
            let didApply = try connection.transaction {
                let recorded = try connection.query(
                    "SELECT 1 FROM schema_migrations WHERE version = ?", migration.version) { _ in true }
                guard recorded.isEmpty else { return false }
                try connection.execute(migration.sql)
                try connection.run("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", migration.version, migration.name)
                return true
            }
            if didApply { applied.append(migration.version) }
        }
        return applied
    }
}
