import FoundationEssentials
import IsthmusCommon

/// `room_state`: per-link resume state — the last stanza-id seen in the MUC, where archive catch-up starts.
enum RoomStateTable {
    static let schema = """
        CREATE TABLE room_state (
            matrix_room     TEXT PRIMARY KEY,
            last_stanza_id  TEXT,
            active_since    REAL,
            updated_at      INTEGER NOT NULL DEFAULT (strftime('%s','now'))
        );
        """
    /// Migration 3's resume state on PostgreSQL.
    static let postgresSchema = """
        CREATE TABLE room_state (
            matrix_room     TEXT PRIMARY KEY,
            last_stanza_id  TEXT,
            active_since    DOUBLE PRECISION,
            updated_at      BIGINT NOT NULL DEFAULT (EXTRACT(EPOCH FROM now())::bigint)
        );
        """

    /// Migration 10: the room's subject/topic and name as last bridged (so a rejoin's subject or a restart's
    /// disco#info is not taken for a change).
    static let textColumns = """
        ALTER TABLE room_state ADD COLUMN subject TEXT;
        ALTER TABLE room_state ADD COLUMN room_name TEXT;
        """

    /// Records `date` as `room`'s first activation unless one (or a stanza-id) is recorded; returns whether it did.
    static func recordFirstActivation(_ db: Database, room: RoomID, at date: Date) throws -> Bool {
        try db.run("INSERT INTO room_state (matrix_room, active_since) VALUES (?, ?) ON CONFLICT DO NOTHING", room,
                   date.timeIntervalSince1970) > 0
    }

    static func setLastStanzaID(_ db: Database, room: RoomID, stanzaID: StanzaID) throws {
        _ = try db.perform([setLastStanzaID(room: room, stanzaID: stanzaID)])
    }

    /// ``setLastStanzaID(_:room:stanzaID:)``'s statement, for a write given up front.
    static func setLastStanzaID(room: RoomID, stanzaID: StanzaID) -> PlannedStatement {
        PlannedStatement(setLastStanzaIDSQL, [room, stanzaID])
    }

    /// ``setLastStanzaID(_:room:stanzaID:)`` as a data-modifying `WITH` clause for PostgreSQL (one round trip with the
    /// statement it precedes), and its parameters.
    static func lastStanzaIDClause(room: RoomID, stanzaID: StanzaID) -> (sql: String, parameters: [any SQLBindable]) {
        ("resumed AS (\(setLastStanzaIDSQL))", [room, stanzaID])
    }

    /// ``setLastStanzaID(_:room:stanzaID:)``'s statement (parameters: room, stanza-id).
    private static let setLastStanzaIDSQL = """
        INSERT INTO room_state (matrix_room, last_stanza_id) VALUES (?, ?)
        ON CONFLICT (matrix_room) DO UPDATE SET last_stanza_id = excluded.last_stanza_id, updated_at = excluded.updated_at
        """
}

extension Store {
    /// The last stanza-id bridged or receipted in `room`'s MUC, if any.
    public func lastStanzaID(_ room: RoomID) throws -> StanzaID? {
        try read { db in
            try db.query("SELECT last_stanza_id FROM room_state WHERE matrix_room = ?", room) { $0.id(0, as: StanzaID.self) }
                .first ?? nil
        }
    }

    /// When `room` was first bridged (the catch-up start while no stanza-id is known yet), if recorded.
    public func activeSince(_ room: RoomID) throws -> Date? {
        try read { db in
            try db.query("SELECT active_since FROM room_state WHERE matrix_room = ?", room) { $0.double(0) }
                .first?.flatMap { Date(timeIntervalSince1970: $0) }
        }
    }

    /// Records `date` as the time `room` was first bridged, unless a time or a stanza-id is already recorded.
    /// Returns whether this was the first activation.
    public func recordFirstActivation(_ room: RoomID, at date: Date) throws -> Bool {
        try write { db in
            try RoomStateTable.recordFirstActivation(db, room: room, at: date)
        }
    }

    /// Sets the resume point of `room`.
    public func setLastStanzaID(_ room: RoomID, _ stanzaID: StanzaID) throws {
        try write { db in try RoomStateTable.setLastStanzaID(db, room: room, stanzaID: stanzaID) }
    }

    /// Forgets `room`'s resume state (after unlink).
    public func deleteRoomState(_ room: RoomID) throws {
        try write { db in _ = try db.run("DELETE FROM room_state WHERE matrix_room = ?", room) }
    }
}
