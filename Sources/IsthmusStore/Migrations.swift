/// A numbered schema change. Applied once, in order, inside a transaction, and recorded in `schema_migrations`.
/// Its SQL is shared when both dialects accept it, per dialect where they differ (column types, defaults, identity).
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    /// The statements for SQLite.
    public let sqlite: String
    /// The statements for PostgreSQL.
    public let postgres: String

    /// A migration whose SQL both dialects accept.
    init(version: Int, name: String, sql: String) {
        self.init(version: version, name: name, sqlite: sql, postgres: sql)
    }

    /// A migration with SQL per dialect.
    init(version: Int, name: String, sqlite: String, postgres: String) {
        self.version = version
        self.name = name
        self.sqlite = sqlite
        self.postgres = postgres
    }

    func sql(for dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite: sqlite
        case .postgres: postgres
        }
    }
}

/// The store's schema history. Append new migrations; never edit an applied one. Numbers 1–12 were written for SQLite
/// first; their PostgreSQL forms make the same tables with PostgreSQL's types (`BIGINT` identities for
/// `AUTOINCREMENT`, `BYTEA` for `BLOB`, `DOUBLE PRECISION` for `REAL`, epoch defaults from `now()`).
enum Migrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "room links", sqlite: RoomLinkTable.schema, postgres: RoomLinkTable.postgresSchema),
        Migration(version: 2, name: "appservice transactions", sqlite: AppServiceTransactionTable.schema,
                  postgres: AppServiceTransactionTable.postgresSchema),
        Migration(version: 3, name: "bridge state",
                  sqlite: GhostTable.schema + PuppetTable.schema + MessageMapTable.schema + RoomStateTable.schema
                      + MatrixInboxTable.schema,
                  postgres: GhostTable.schema + PuppetTable.schema + MessageMapTable.postgresSchema
                      + RoomStateTable.postgresSchema + MatrixInboxTable.postgresSchema),
        Migration(version: 4, name: "room archive capability", sql: RoomLinkTable.archiveColumn),
        Migration(version: 5, name: "rich messages", sqlite: MessageMapTable.richColumns + ReactionTable.schema,
                  postgres: MessageMapTable.richColumns + ReactionTable.postgresSchema),
        Migration(version: 6, name: "invited rooms", sqlite: InvitedRoomTable.schema, postgres: InvitedRoomTable.postgresSchema),
        Migration(version: 7, name: "direct chats", sql: DirectChatTable.schema),
        Migration(version: 8, name: "matrix moderators to MUC", sql: RoomLinkTable.matrixModeratorsColumn),
        Migration(version: 9, name: "bridge secrets", sql: BridgeSecretTable.schema),
        Migration(version: 10, name: "room subject and name", sql: RoomLinkTable.syncNameColumn + RoomStateTable.textColumns),
        Migration(version: 11, name: "avatars", sqlite: AvatarTable.schema, postgres: AvatarTable.postgresSchema),
        Migration(version: 12, name: "room avatar", sql: RoomAvatarColumns.schema),
        Migration(version: 13, name: "bridge lease", sql: LeaseTable.schema),
        Migration(version: 14, name: "room link version", sql: RoomLinkTable.versionSchema),
        Migration(version: 15, name: "xmpp sessions", sql: XMPPSessionTable.schema),
        Migration(version: 16, name: "xmpp credentials", sqlite: XMPPCredentialTable.schema, postgres: XMPPCredentialTable.postgresSchema),
        Migration(version: 17, name: "matrix sessions", sql: MatrixSessionTable.schema),
        Migration(version: 18, name: "matrix sync position", sql: MatrixSyncTable.schema),
        Migration(version: 19, name: "matrix session oauth client", sql: MatrixSessionTable.oauthClientColumn),
        Migration(version: 20, name: "dynamic links", sql: RoomLinkTable.kindColumns),
        Migration(version: 21, name: "gateway rooms", sql: GatewayOccupantTable.schema + GatewayAliasTable.schema + GatewayDirectTable.schema),
        Migration(version: 22, name: "ghost devices", sqlite: GhostDeviceTable.schema, postgres: GhostDeviceTable.postgresSchema),
        Migration(version: 23, name: "encryption sessions", sqlite: CryptoSessionTable.schema, postgres: CryptoSessionTable.postgresSchema),
    ]

    /// `schema_migrations` itself.
    static func historySchema(_ dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite: """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version INTEGER PRIMARY KEY,
                name TEXT NOT NULL,
                applied_at INTEGER NOT NULL DEFAULT (strftime('%s','now'))
            )
            """
        case .postgres: """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version BIGINT PRIMARY KEY,
                name TEXT NOT NULL,
                applied_at BIGINT NOT NULL DEFAULT (EXTRACT(EPOCH FROM now())::bigint)
            )
            """
        }
    }

    /// The key of the transaction-scoped advisory lock that serialises migrations on PostgreSQL ("isthmus" in ASCII).
    static let postgresLockKey: Int64 = 0x6973_7468_6D75_73

    /// Applies the migrations not yet recorded; returns the versions applied now.
    ///
    /// A pending migration is checked again inside its own transaction, so two processes opening a new database at
    /// once (the CLI beside `serve`, or two `serve`s of a pair) apply it once: on SQLite the second waits for the
    /// `BEGIN IMMEDIATE` lock, on PostgreSQL for `pg_advisory_xact_lock`, then sees it recorded.
    /// - Throws: ``StoreError/Kind/unknownSchema`` when the database records a migration this binary does not know
    ///   (a newer version migrated it): running on it could corrupt what that version wrote.
    static func apply(_ migrations: [Migration], to db: Database) throws -> [Int] {
        try db.transaction {
            try lockMigrations(db)
            try db.execute(historySchema(db.dialect))
        }
        let done = Set(try db.query("SELECT version FROM schema_migrations") { $0.int(0) ?? 0 })
        try refuseUnknown(done, known: migrations)
        var applied: [Int] = []
        for migration in migrations.sorted(by: { $0.version < $1.version }) where !done.contains(migration.version) {
            let didApply = try db.transaction {
                try lockMigrations(db)
                let recorded = try db.query("SELECT 1 FROM schema_migrations WHERE version = ?", migration.version) { _ in true }
                guard recorded.isEmpty else { return false }
                try db.execute(migration.sql(for: db.dialect))
                try db.run("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", migration.version, migration.name)
                return true
            }
            if didApply { applied.append(migration.version) }
        }
        return applied
    }

    /// PostgreSQL: waits for the migration lock (released at commit). SQLite: nothing (`BEGIN IMMEDIATE` locked).
    private static func lockMigrations(_ db: Database) throws(StoreError) {
        guard db.dialect == .postgres else { return }
        try db.execute("SELECT pg_advisory_xact_lock(\(postgresLockKey))")
    }

    private static func refuseUnknown(_ done: Set<Int>, known: [Migration]) throws(StoreError) {
        let unknown = done.subtracting(known.map(\.version)).sorted()
        guard unknown.isEmpty else {
            throw StoreError(.unknownSchema, "the database has migrations this version of Isthmus does not know ("
                             + unknown.map(String.init).joined(separator: ", ")
                             + "): a newer version migrated it; run that version, or restore a backup")
        }
    }
}
