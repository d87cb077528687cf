import IsthmusCommon

/// `ghosts` and `room_ghosts`: Matrix ghosts of XMPP occupants — who each ghost is, and where it is joined.
enum GhostTable {
    static let schema = """
        CREATE TABLE ghosts (
            user_id       TEXT PRIMARY KEY,
            identity      TEXT NOT NULL UNIQUE,
            global_name   TEXT
        );
        CREATE TABLE room_ghosts (
            matrix_room   TEXT NOT NULL,
            user_id       TEXT NOT NULL,
            nick          TEXT NOT NULL,
            occupant_id   TEXT,
            real_jid      TEXT,
            joined        INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (matrix_room, user_id)
        );
        """
}

/// A ghost's place in one room: the occupant it stands for, its current nick, whether it is joined on Matrix.
public struct RoomGhost: Sendable, Equatable {
    public var room: RoomID
    public var user: UserID
    public var nick: String
    public var occupantID: OccupantID?
    public var realJID: JID?
    public var joined: Bool

    public init(room: RoomID, user: UserID, nick: String, occupantID: OccupantID?, realJID: JID?, joined: Bool) {
        self.room = room
        self.user = user
        self.nick = nick
        self.occupantID = occupantID
        self.realJID = realJID
        self.joined = joined
    }
}

extension Store {
    /// Records that `user` is the ghost of `identity`; returns whether it was new (so its global name must be set).
    public func recordGhost(_ user: UserID, identity: String, globalName: String) async throws -> Bool {
        try await groupedWrite { db in
            try db.run("INSERT INTO ghosts (user_id, identity, global_name) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                       user, identity, globalName) > 0
        }
    }

    /// Whether `user` is a ghost we created.
    public func isKnownGhost(_ user: UserID) throws -> Bool {
        try read { db in try !db.query("SELECT 1 FROM ghosts WHERE user_id = ?", user) { _ in true }.isEmpty }
    }

    /// What `user` was derived from (a real bare JID, or a room plus an occupant key); nil for no ghost of ours.
    public func ghostIdentity(_ user: UserID) throws -> String? {
        try read { db in try db.query("SELECT identity FROM ghosts WHERE user_id = ?", user) { row in row.string(0) }.first ?? nil }
    }

    /// The ghosts of `room`, joined or not.
    public func roomGhosts(_ room: RoomID) throws -> [RoomGhost] {
        try read { db in try Self.roomGhosts(db, room) }
    }

    static func roomGhosts(_ db: Database, _ room: RoomID) throws -> [RoomGhost] {
        try db.query("SELECT user_id, nick, occupant_id, real_jid, joined FROM room_ghosts WHERE matrix_room = ?", room) { row in
            RoomGhost(room: room, user: row.id(0)!, nick: row.string(1) ?? "", occupantID: row.id(2), realJID: row.id(3),
                      joined: (row.int(4) ?? 0) != 0)
        }
    }

    /// The ghost's current state in the linked `room` (its nick, whether its occupant is in the MUC), if stored.
    public func roomGhost(_ user: UserID, in room: RoomID) throws -> RoomGhost? {
        try read { db in
            try db.query("SELECT nick, occupant_id, real_jid, joined FROM room_ghosts WHERE matrix_room = ? AND user_id = ?",
                         room, user) { row in
                RoomGhost(room: room, user: user, nick: row.string(0) ?? "", occupantID: row.id(1), realJID: row.id(2),
                          joined: (row.int(3) ?? 0) != 0)
            }.first
        }
    }

    /// Inserts or replaces a ghost's state in its room.
    public func saveRoomGhost(_ ghost: RoomGhost) async throws {
        try await groupedWrite { db in
            _ = try db.run("""
                INSERT INTO room_ghosts (matrix_room, user_id, nick, occupant_id, real_jid, joined) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (matrix_room, user_id) DO UPDATE SET nick = excluded.nick, occupant_id = excluded.occupant_id,
                    real_jid = excluded.real_jid, joined = excluded.joined
                """, ghost.room, ghost.user, ghost.nick, ghost.occupantID, ghost.realJID, ghost.joined)
        }
    }

    /// Whether a ghost of a linked room stands for `person` (their bare JID; the occupant's real JID as the room gave
    /// it, full or bare).
    public func hasRoomGhost(realJID person: JID) throws -> Bool {
        let bare = person.bare.description
        return try read { db in
            try db.query("""
                SELECT 1 FROM room_ghosts WHERE real_jid = ? OR substr(real_jid, 1, ?) = ? LIMIT 1
                """, bare, bare.utf8.count + 1, bare + "/") { _ in true }.first ?? false
        }
    }

    /// Forgets every ghost of `room` (after unlink).
    public func deleteRoomGhosts(_ room: RoomID) throws {
        try write { db in _ = try db.run("DELETE FROM room_ghosts WHERE matrix_room = ?", room) }
    }
}
