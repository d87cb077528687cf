/// One table `migrate-store` copies: its name, the key it pages through the table by, and the column an identity or
/// `AUTOINCREMENT` sequence fills. Its columns are read from both databases at run time (and must match), so a new
/// column needs nothing here; a new table does — ``StoreCopy`` refuses a database with a table it does not know.
struct StoreCopyTable: Sendable, Equatable {
    let name: String
    /// The primary key's columns: rows are read in this order, `batch` at a time (keyset pagination).
    let key: [String]
    /// The column a sequence fills on insert (PostgreSQL identity, SQLite `AUTOINCREMENT` or rowid): after the copy
    /// the target's sequence is moved past the source's high-water mark, so the next insert gets a new number.
    let sequence: String?
    /// Rows per read (smaller for tables with large values, so a batch stays small in memory).
    let batch: Int
    /// The migrations insert this table's rows (a singleton): the target's are replaced, not counted as data.
    let seeded: Bool

    init(_ name: String, key: [String], sequence: String? = nil, batch: Int = 1_000, seeded: Bool = false) {
        self.name = name
        self.key = key
        self.sequence = sequence
        self.batch = batch
        self.seeded = seeded
    }

    /// Every bridge table, links first (no table has foreign keys today; this is the order one would need them in).
    /// `room_links` and `reactions` keep SQLite's implicit `rowid`, an explicit identity column on PostgreSQL (their
    /// "oldest first" order).
    static let all: [StoreCopyTable] = [
        StoreCopyTable("room_links", key: ["matrix_room"], sequence: "rowid"),
        StoreCopyTable("room_link_version", key: ["id"], seeded: true),
        StoreCopyTable("room_state", key: ["matrix_room"]),
        StoreCopyTable("ghosts", key: ["user_id"]),
        StoreCopyTable("room_ghosts", key: ["matrix_room", "user_id"]),
        StoreCopyTable("puppets", key: ["matrix_room", "matrix_user"]),
        StoreCopyTable("message_map", key: ["seq"], sequence: "seq"),
        StoreCopyTable("reactions", key: ["matrix_room", "target_event", "reactor", "reaction_key"], sequence: "rowid"),
        StoreCopyTable("matrix_inbox", key: ["seq"], sequence: "seq", batch: 200),
        StoreCopyTable("appservice_transactions", key: ["txn_id"]),
        StoreCopyTable("invited_rooms", key: ["matrix_room"]),
        StoreCopyTable("direct_chats", key: ["linked_room", "ghost", "matrix_user"]),
        StoreCopyTable("direct_events", key: ["event_id"]),
        StoreCopyTable("bridge_secrets", key: ["name"]),
        StoreCopyTable("xmpp_avatars", key: ["sha1"]),
        StoreCopyTable("matrix_avatars", key: ["mxc"], batch: 20),
        StoreCopyTable("xmpp_sessions", key: ["account"]),
        StoreCopyTable("xmpp_credentials", key: ["account"]),
        StoreCopyTable("matrix_sessions", key: ["user_id"]),
        StoreCopyTable("matrix_sync", key: ["account"]),
        StoreCopyTable("gateway_occupants", key: ["room", "resource"]),
        StoreCopyTable("gateway_aliases", key: ["address"]),
        StoreCopyTable("gateway_directs", key: ["ghost", "matrix_user"]),
        StoreCopyTable("ghost_devices", key: ["user_id"]),
        StoreCopyTable("olm_sessions", key: ["user_id", "sender_key", "session_id"]),
        StoreCopyTable("megolm_inbound_sessions", key: ["room_id", "session_id"]),
        StoreCopyTable("megolm_message_indexes", key: ["room_id", "session_id", "message_index"]),
        StoreCopyTable("held_encrypted_events", key: ["event_id"]),
    ]

    /// Tables that are not bridge data: the migration history (each side has its own, and both must agree),
    /// SQLite's own bookkeeping, and the active/standby lease (runtime state of the target's own processes).
    static let notCopied: Set<String> = ["schema_migrations", "sqlite_sequence", "bridge_lease"]
}
