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
    ]

    /// Applies the migrations not yet recorded; returns the versions applied now.
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
            try connection.transaction {
                try connection.execute(migration.sql)
                try connection.run("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", migration.version, migration.name)
            }
            applied.append(migration.version)
        }
        return applied
    }
}
