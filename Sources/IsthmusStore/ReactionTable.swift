import IsthmusCommon

/// `reactions`: who reacted with what to which bridged message, and the Matrix event of each reaction.
///
/// XEP-0444 sends a user's whole set for a message while Matrix has one event per (user, key): the set is kept here
/// so an XMPP set can be diffed against what was bridged before, and a Matrix reaction's redaction can be turned into
/// the user's reduced set. Keyed by the reacted message's Matrix event and the reactor as ``MessageSender``.
enum ReactionTable {
    static let schema = """
        CREATE TABLE reactions (
            matrix_room   TEXT NOT NULL,
            target_event  TEXT NOT NULL,
            reactor       TEXT NOT NULL,
            reaction_key  TEXT NOT NULL,
            event_id      TEXT,
            PRIMARY KEY (matrix_room, target_event, reactor, reaction_key)
        );
        CREATE INDEX reactions_event ON reactions (matrix_room, event_id);
        """

    static func apply(_ db: SQLiteConnection, _ change: ReactionChange) throws {
        for reaction in change.added {
            _ = try db.run("""
                INSERT OR REPLACE INTO reactions (matrix_room, target_event, reactor, reaction_key, event_id) VALUES (?, ?, ?, ?, ?)
                """, reaction.room, reaction.target, reaction.reactor.description, reaction.key, reaction.eventID)
        }
        for reaction in change.removed {
            _ = try db.run("DELETE FROM reactions WHERE matrix_room = ? AND target_event = ? AND reactor = ? AND reaction_key = ?",
                           reaction.room, reaction.target, reaction.reactor.description, reaction.key)
        }
    }

    static func decode(_ row: SQLiteConnection.Row, direction: MessageMapping.Direction) -> Reaction {
        Reaction(room: row.id(0)!, target: row.id(1)!, reactor: MessageSender(stored: row.string(2) ?? "", direction: direction),
                 key: row.string(3) ?? "", eventID: row.id(4))
    }
}

/// One user's reaction `key` to the message that is Matrix event `target`.
public struct Reaction: Sendable, Hashable {
    public var room: RoomID
    public var target: EventID
    public var reactor: MessageSender
    public var key: String
    /// The `m.reaction` event (sent by a ghost for XMPP reactors; the user's own for Matrix reactors).
    public var eventID: EventID?

    public init(room: RoomID, target: EventID, reactor: MessageSender, key: String, eventID: EventID?) {
        self.room = room
        self.target = target
        self.reactor = reactor
        self.key = key
        self.eventID = eventID
    }
}

/// Reactions to add and remove in one commit.
public struct ReactionChange: Sendable, Hashable {
    public var added: [Reaction]
    public var removed: [Reaction]

    public init(added: [Reaction] = [], removed: [Reaction] = []) {
        self.added = added
        self.removed = removed
    }

    public var isEmpty: Bool { added.isEmpty && removed.isEmpty }
}

extension Store {
    /// `reactor`'s reactions to `target`, oldest key first.
    public func reactions(room: RoomID, target: EventID, reactor: MessageSender) throws -> [Reaction] {
        let direction: MessageMapping.Direction = reactor.matrixUser != nil ? .matrixToXMPP : .xmppToMatrix
        return try read { db in
            try db.query("""
                SELECT matrix_room, target_event, reactor, reaction_key, event_id FROM reactions
                WHERE matrix_room = ? AND target_event = ? AND reactor = ? ORDER BY rowid
                """, room, target, reactor.description) { ReactionTable.decode($0, direction: direction) }
        }
    }

    /// The reaction whose Matrix event is `eventID` (a Matrix user's reaction being redacted).
    public func reaction(room: RoomID, eventID: EventID) throws -> Reaction? {
        try read { db in
            try db.query("""
                SELECT matrix_room, target_event, reactor, reaction_key, event_id FROM reactions
                WHERE matrix_room = ? AND event_id = ? LIMIT 1
                """, room, eventID) { ReactionTable.decode($0, direction: .matrixToXMPP) }.first
        }
    }

    /// Records an XMPP → Matrix event (see ``recordBridgedFromXMPP(_:)``) together with the reaction changes it made.
    public func recordBridgedFromXMPP(_ mapping: MessageMapping, reactions: ReactionChange) throws {
        try write { db in
            try ReactionTable.apply(db, reactions)
            try Self.recordBridgedFromXMPP(db, mapping)
        }
    }
}
