import IsthmusCommon

/// `direct_chats`: the Matrix DM room of each (linked room, XMPP occupant, Matrix user) triple — where MUC private
/// messages between the two go (RICH.md §12). The occupant is keyed by its ghost, which is derived from its identity.
///
/// The row is written before the DM room is created (with no room), so a retry finds it; `matrix_room` is set as soon
/// as the homeserver answers, and cleared when the Matrix user leaves the room (the next private message creates a
/// new one). `identity` is the one the occupant's ghost is derived from (real JID when known, else the occupant JID),
/// so a nick change keeps the same DM room. `direct_events`: the DM events already handled (a replay is not sent twice).
enum DirectChatTable {
    static let schema = """
        CREATE TABLE direct_chats (
            linked_room  TEXT NOT NULL,
            identity     TEXT NOT NULL,
            matrix_user  TEXT NOT NULL,
            muc          TEXT NOT NULL,
            ghost        TEXT NOT NULL,
            matrix_room  TEXT,
            PRIMARY KEY (linked_room, ghost, matrix_user)
        );
        CREATE UNIQUE INDEX direct_chats_room ON direct_chats (matrix_room) WHERE matrix_room IS NOT NULL;
        CREATE TABLE direct_events (
            event_id     TEXT PRIMARY KEY,
            matrix_room  TEXT NOT NULL
        );
        """
}

/// One pair's DM: the linked room (and its MUC) it belongs to, the XMPP occupant (by identity, and its ghost), the
/// Matrix user, and the DM room when there is one.
public struct DirectChat: Sendable, Equatable {
    public var linkedRoom: RoomID
    public var identity: String
    public var matrixUser: UserID
    public var muc: JID
    public var ghost: UserID
    /// nil: not created yet, or the Matrix user left it.
    public var matrixRoom: RoomID?

    public init(linkedRoom: RoomID, identity: String, matrixUser: UserID, muc: JID, ghost: UserID, matrixRoom: RoomID? = nil) {
        self.linkedRoom = linkedRoom
        self.identity = identity
        self.matrixUser = matrixUser
        self.muc = muc
        self.ghost = ghost
        self.matrixRoom = matrixRoom
    }
}

/// A linked room where a Matrix user and an XMPP occupant's ghost both have a place: where a DM the Matrix user
/// starts with that ghost can run (the user's occupant sends the private messages there).
public struct SharedRoom: Sendable, Equatable {
    public var linkedRoom: RoomID
    public var muc: JID
    /// Whether the ghost's occupant is in the MUC now.
    public var ghostJoined: Bool
    /// Whether the Matrix user's occupant is in the MUC now.
    public var userJoined: Bool

    public init(linkedRoom: RoomID, muc: JID, ghostJoined: Bool, userJoined: Bool) {
        self.linkedRoom = linkedRoom
        self.muc = muc
        self.ghostJoined = ghostJoined
        self.userJoined = userJoined
    }
}

extension Store {
    private static let directChatColumns = "linked_room, identity, matrix_user, muc, ghost, matrix_room"

    private static func directChat(_ row: Database.Row) -> DirectChat? {
        guard let linked = row.id(0, as: RoomID.self), let identity = row.string(1), let user = row.id(2, as: UserID.self),
              let muc = row.id(3, as: JID.self), let ghost = row.id(4, as: UserID.self) else { return nil }
        return DirectChat(linkedRoom: linked, identity: identity, matrixUser: user, muc: muc, ghost: ghost,
                          matrixRoom: row.id(5, as: RoomID.self))
    }

    /// The DM of a pair, if one was ever started.
    public func directChat(linkedRoom: RoomID, ghost: UserID, user: UserID) throws -> DirectChat? {
        try read { db in
            try db.query("SELECT \(Self.directChatColumns) FROM direct_chats WHERE linked_room = ? AND ghost = ? AND matrix_user = ?",
                         linkedRoom, ghost, user, map: Self.directChat).compactMap { $0 }.first
        }
    }

    /// The DM whose Matrix room is `room`, if any.
    public func directChat(in room: RoomID) throws -> DirectChat? {
        try read { db in
            try db.query("SELECT \(Self.directChatColumns) FROM direct_chats WHERE matrix_room = ?", room,
                         map: Self.directChat).compactMap { $0 }.first
        }
    }

    /// Inserts or replaces a pair's DM.
    public func saveDirectChat(_ chat: DirectChat) throws {
        try write { db in
            _ = try db.run("""
                INSERT INTO direct_chats (\(Self.directChatColumns)) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (linked_room, ghost, matrix_user) DO UPDATE SET muc = excluded.muc, identity = excluded.identity,
                    matrix_room = excluded.matrix_room
                """, chat.linkedRoom, chat.identity, chat.matrixUser, chat.muc, chat.ghost, chat.matrixRoom)
        }
    }

    /// Which of `rooms` are DM rooms (their events go to the DMs, not to a portal).
    public func directRooms(among rooms: Set<RoomID>) throws -> Set<RoomID> {
        try read { db in
            try db.found(among: rooms) { "SELECT matrix_room FROM direct_chats WHERE matrix_room IN (\($0))" }
        }
    }

    /// The current DM rooms that belong to the linked room `linkedRoom`.
    public func directRooms(of linkedRoom: RoomID) throws -> [RoomID] {
        try read { db in
            // Sorted here, byte-wise, rather than by the database's collation (PostgreSQL's may follow a locale).
            try db.query("SELECT matrix_room FROM direct_chats WHERE linked_room = ? AND matrix_room IS NOT NULL",
                         linkedRoom) { $0.string(0) }.compactMap { $0 }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                .compactMap { RoomID($0) }
        }
    }

    /// The linked rooms (not being unlinked) where `ghost`'s occupant and `user`'s occupant were both seen, joined or
    /// not, in link order. (Rare — a Matrix user inviting a ghost — so a scan of the ghost's rows is fine.)
    public func sharedRooms(ghost: UserID, user: UserID) throws -> [SharedRoom] {
        try read { db in
            try db.query("""
                SELECT g.matrix_room, l.muc, g.joined, p.joined FROM room_ghosts g
                JOIN room_links l ON l.matrix_room = g.matrix_room AND l.unlinking = 0
                JOIN puppets p ON p.matrix_room = g.matrix_room AND p.matrix_user = ?
                WHERE g.user_id = ? ORDER BY l.created_at, l.rowid
                """, user, ghost) { row in
                guard let room = row.id(0, as: RoomID.self), let muc = row.id(1, as: JID.self) else { return nil }
                return SharedRoom(linkedRoom: room, muc: muc, ghostJoined: (row.int(2) ?? 0) != 0, userJoined: (row.int(3) ?? 0) != 0)
            }.compactMap { $0 }
        }
    }

    /// Whether the DM event in inbox row `seq` is still to be handled: queued, and not handled before (a replay of an
    /// event already handled finds it in `direct_events`; its new row is then dropped).
    public func isDirectEventPending(seq: Int64, eventID: EventID) throws -> Bool {
        try write { db in
            guard try !db.query("SELECT 1 FROM matrix_inbox WHERE seq = ?", seq, map: { _ in true }).isEmpty else { return false }
            guard try db.query("SELECT 1 FROM direct_events WHERE event_id = ?", eventID, map: { _ in true }).isEmpty else {
                _ = try db.run("DELETE FROM matrix_inbox WHERE seq = ?", seq)
                return false
            }
            return true
        }
    }

    /// Records a DM event as handled and removes its inbox row, in one commit — with the message map row of what it
    /// sent (`mapping`: edits, reactions and retractions in the DM find their targets by it) and its reaction change.
    public func consumeDirectEvent(seq: Int64, eventID: EventID, room: RoomID, mapping: MessageMapping? = nil,
                                   reaction: ReactionChange? = nil) throws {
        try write { db in
            _ = try db.run("INSERT INTO direct_events (event_id, matrix_room) VALUES (?, ?) ON CONFLICT DO NOTHING", eventID, room)
            if let mapping, try MessageMapTable.insert(db, mapping), let reaction { try ReactionTable.apply(db, reaction) }
            _ = try db.run("DELETE FROM matrix_inbox WHERE seq = ?", seq)
        }
    }
}
