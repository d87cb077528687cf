import FoundationEssentials
import IsthmusCommon

/// `message_map`: each bridged message's ids on both sides — the dedupe key and the receipt.
///
/// XMPP → Matrix rows are keyed by the room's stanza-id and filled with the event id the homeserver returned.
/// Matrix → XMPP rows are keyed by event id, created `sending` before the stanza leaves, and receipted
/// (`delivered`, with the room's stanza-id) when the MUC reflects our origin-id.
enum MessageMapTable {
    static let schema = """
        CREATE TABLE message_map (
            matrix_room   TEXT NOT NULL,
            event_id      TEXT,
            stanza_id     TEXT,
            origin_id     TEXT,
            direction     TEXT NOT NULL,
            sender        TEXT NOT NULL,
            state         TEXT NOT NULL,
            body          TEXT,
            created_at    REAL NOT NULL DEFAULT ((julianday('now') - 2440587.5) * 86400.0),
            seq           INTEGER PRIMARY KEY AUTOINCREMENT
        );
        CREATE UNIQUE INDEX message_map_event ON message_map (matrix_room, event_id);
        CREATE UNIQUE INDEX message_map_stanza ON message_map (matrix_room, stanza_id);
        CREATE UNIQUE INDEX message_map_origin ON message_map (matrix_room, origin_id);
        """
    /// The sender-scoped lookups (corrections by `id`, older retractions by origin-id) concern XMPP senders only: their
    /// indexes are partial and hold the id alone (room and sender are checked on the one or two rows found). Two
    /// indexes keyed by room + sender + id on every row cost ~60 µs per bridged message both ways (docs/performance.md).
    /// Migration 5 also narrows the origin-id's uniqueness to our own (Matrix → XMPP) rows: XMPP senders choose
    /// their origin-ids, which are unique per sender only — a second sender reusing one must not lose its row.
    /// Migration 5: what rich messages need — the message's `id` attribute and the sender's nick at send time (replies,
    /// corrections), what kind of event a row stands for and which original it refers to (corrections, reactions,
    /// retractions are mapped too), a short excerpt of the text (the quote of a reply for clients without XEP-0461)
    /// and, for Matrix → XMPP rows, the whole outgoing stanza's content until it is delivered (resends).
    static let richColumns = """
        ALTER TABLE message_map ADD COLUMN kind TEXT NOT NULL DEFAULT 'message';
        ALTER TABLE message_map ADD COLUMN xmpp_id TEXT;
        ALTER TABLE message_map ADD COLUMN nick TEXT;
        ALTER TABLE message_map ADD COLUMN target_event TEXT;
        ALTER TABLE message_map ADD COLUMN excerpt TEXT;
        ALTER TABLE message_map ADD COLUMN payload TEXT;
        CREATE INDEX message_map_x2m_id ON message_map (xmpp_id) WHERE direction = 'x2m';
        CREATE INDEX message_map_x2m_origin ON message_map (origin_id) WHERE direction = 'x2m';
        DROP INDEX message_map_origin;
        CREATE UNIQUE INDEX message_map_origin ON message_map (matrix_room, origin_id) WHERE direction = 'm2x';
        """
    static let columns = """
        matrix_room, event_id, stanza_id, origin_id, direction, sender, state, body, seq, created_at, \
        kind, xmpp_id, nick, target_event, excerpt, payload
        """
}

/// One bridged message.
public struct MessageMapping: Sendable, Equatable {
    public enum Direction: String, Sendable { case xmppToMatrix = "x2m", matrixToXMPP = "m2x" }
    public enum State: String, Sendable {
        /// Matrix → XMPP: sent (or about to be), no reflection seen yet.
        case sending
        /// Delivered: the other side's id is known.
        case delivered
        /// The other side refused it; the sender was told.
        case failed
    }
    /// What a row stands for: a message, or an event that refers to one (``target``).
    public enum Kind: String, Sendable {
        case message
        /// A correction (XEP-0308) / `m.replace`.
        case edit
        /// A reaction update (XEP-0444 set) / `m.reaction` or its redaction.
        case reaction
        /// A retraction or moderation (XEP-0424/0425) / `m.room.redaction`.
        case retraction
    }
    public var room: RoomID
    public var eventID: EventID?
    public var stanzaID: StanzaID?
    public var originID: OriginID?
    public var direction: Direction
    /// The sender on the source side.
    public var sender: MessageSender
    public var state: State
    /// Matrix → XMPP: the body as sent, kept until delivered so it can be resent.
    public var body: String?
    public var kind: Kind = .message
    /// The message's `id` attribute (ours: the origin-id); corrections name the original by it, per sender.
    public var xmppID: MessageIDAttribute?
    /// The sender's nick when the message was sent (the `to` of a XEP-0461 reply to it).
    public var nick: String?
    /// For edits, reactions and retractions: the Matrix event of the message they refer to.
    public var target: EventID?
    /// The start of the message's plain text, for the quote of a reply to it.
    public var excerpt: String?
    /// Matrix → XMPP: the outgoing stanza's content (encoded by the bridge), kept until delivered so it can be resent.
    public var payload: String?
    /// Insertion order (resends keep it).
    public var seq: Int64 = 0
    /// When the row was created (set when read from the store; the store stamps new rows itself).
    public var createdAt = Date.distantPast

    public init(room: RoomID, eventID: EventID?, stanzaID: StanzaID?, originID: OriginID?, direction: Direction,
                sender: MessageSender, state: State, body: String? = nil, kind: Kind = .message,
                xmppID: MessageIDAttribute? = nil, nick: String? = nil, target: EventID? = nil, excerpt: String? = nil,
                payload: String? = nil) {
        self.room = room
        self.eventID = eventID
        self.stanzaID = stanzaID
        self.originID = originID
        self.direction = direction
        self.sender = sender
        self.state = state
        self.body = body
        self.kind = kind
        self.xmppID = xmppID
        self.nick = nick
        self.target = target
        self.excerpt = excerpt
        self.payload = payload
    }
}

extension Store {
    /// The mapping for a room's stanza-id, if that message was bridged (or is ours).
    public func mapping(room: RoomID, stanzaID: StanzaID) throws -> MessageMapping? {
        try read { db in
            try db.query("SELECT \(MessageMapTable.columns) FROM message_map WHERE matrix_room = ? AND stanza_id = ?",
                         room, stanzaID, map: MessageMapTable.decode).first
        }
    }

    /// The mapping for a Matrix event id.
    public func mapping(room: RoomID, eventID: EventID) throws -> MessageMapping? {
        try read { db in
            try db.query("SELECT \(MessageMapTable.columns) FROM message_map WHERE matrix_room = ? AND event_id = ?",
                         room, eventID, map: MessageMapTable.decode).first
        }
    }

    /// The mapping for one of our origin-ids (a Matrix → XMPP message).
    public func mapping(room: RoomID, originID: OriginID) throws -> MessageMapping? {
        try read { db in
            try db.query("SELECT \(MessageMapTable.columns) FROM message_map WHERE matrix_room = ? AND origin_id = ? AND direction = 'm2x'",
                         room, originID, map: MessageMapTable.decode).first
        }
    }

    /// The row for the message `sender` gave the `id` attribute `xmppID` (or, with `originID`, that origin-id) — ids
    /// are only unique per sender (XEP-0359 §Security: origin-ids are spoofable).
    public func mapping(room: RoomID, sender: MessageSender, xmppID: MessageIDAttribute) throws -> MessageMapping? {
        try read { db in
            try db.query("SELECT \(MessageMapTable.columns) FROM message_map WHERE xmpp_id = ? AND direction = 'x2m' AND matrix_room = ? AND sender = ? ORDER BY seq LIMIT 1",
                         xmppID, room, sender.description, map: MessageMapTable.decode).first
        }
    }

    /// The row for the message `sender` gave the origin-id `originID`.
    public func mapping(room: RoomID, sender: MessageSender, originID: OriginID) throws -> MessageMapping? {
        try read { db in
            try db.query("SELECT \(MessageMapTable.columns) FROM message_map WHERE origin_id = ? AND direction = 'x2m' AND matrix_room = ? AND sender = ? ORDER BY seq LIMIT 1",
                         originID, room, sender.description, map: MessageMapTable.decode).first
        }
    }

    /// Records a new mapping; returns false when one with the same ids already exists (nothing changed).
    /// `consumingInbox`: the Matrix inbox entry it stands for is deleted in the same commit — from then on the
    /// mapping (`sending`, with its body) is what gets the message out, also after a crash.
    /// `reaction`: the Matrix → XMPP reaction change this row sends, applied to the reactions table in the same commit.
    public func insertMapping(_ mapping: MessageMapping, consumingInbox seq: Int64? = nil,
                              reaction: ReactionChange? = nil) throws -> Bool {
        try write { db in
            let inserted = try MessageMapTable.insert(db, mapping)
            if inserted, let reaction { try ReactionTable.apply(db, reaction) }
            if let seq { _ = try db.run("DELETE FROM matrix_inbox WHERE seq = ?", seq) }
            return inserted
        }
    }

    /// Marks our message `originID` delivered with the room's `stanzaID` (the receipt) and advances the room's resume point.
    public func markDelivered(room: RoomID, originID: OriginID, stanzaID: StanzaID?) throws {
        try write { db in
            _ = try db.run("UPDATE message_map SET state = 'delivered', stanza_id = COALESCE(?, stanza_id), body = NULL, payload = NULL WHERE matrix_room = ? AND origin_id = ? AND direction = 'm2x'",
                           stanzaID, room, originID)
            if let stanzaID { try RoomStateTable.setLastStanzaID(db, room: room, stanzaID: stanzaID) }
        }
    }

    /// The receipt of one of our Matrix → XMPP messages, in one write: marks the mapping with `originID` delivered with
    /// the room's `stanzaID` and advances the resume point — if there is such a mapping not yet delivered; returns
    /// whether there was. A second reflection of the same message (a resend that also arrived) changes nothing and
    /// returns false, so true happens once per message.
    public func markDeliveredIfOurs(room: RoomID, originID: OriginID, stanzaID: StanzaID?) throws -> Bool {
        try write { db in
            let updated = try db.run("""
                UPDATE message_map SET state = 'delivered', stanza_id = COALESCE(?, stanza_id), body = NULL, payload = NULL
                WHERE matrix_room = ? AND origin_id = ? AND direction = 'm2x' AND state <> 'delivered'
                """, stanzaID, room, originID) > 0
            if updated, let stanzaID { try RoomStateTable.setLastStanzaID(db, room: room, stanzaID: stanzaID) }
            return updated
        }
    }

    /// Marks a message as refused by the other side.
    public func markFailed(room: RoomID, originID: OriginID) throws {
        try write { db in
            _ = try db.run("UPDATE message_map SET state = 'failed', body = NULL, payload = NULL WHERE matrix_room = ? AND origin_id = ? AND direction = 'm2x'", room, originID)
        }
    }

    /// Matrix → XMPP messages still waiting for their reflection, oldest first.
    public func undeliveredMappings(_ room: RoomID) throws -> [MessageMapping] {
        try read { db in
            try db.query("SELECT \(MessageMapTable.columns) FROM message_map WHERE matrix_room = ? AND state = 'sending' ORDER BY seq",
                         room, map: MessageMapTable.decode)
        }
    }

    /// Records an XMPP → Matrix message — bridged (`delivered`, with its event id) or refused for good (`failed`) — and
    /// advances the room's resume point, in one transaction.
    public func recordBridgedFromXMPP(_ mapping: MessageMapping) throws {
        try write { db in try Self.recordBridgedFromXMPP(db, mapping) }
    }

    static func recordBridgedFromXMPP(_ db: SQLiteConnection, _ mapping: MessageMapping) throws {
        var row = mapping
        row.direction = .xmppToMatrix
        row.body = nil
        row.payload = nil
        _ = try MessageMapTable.insert(db, row)
        if let stanzaID = mapping.stanzaID { try RoomStateTable.setLastStanzaID(db, room: mapping.room, stanzaID: stanzaID) }
    }

    /// Forgets every mapping of `room` (after unlink).
    public func deleteMappings(_ room: RoomID) throws {
        try write { db in
            _ = try db.run("DELETE FROM message_map WHERE matrix_room = ?", room)
            _ = try db.run("DELETE FROM reactions WHERE matrix_room = ?", room)
        }
    }
}

extension MessageMapTable {
    static func decode(_ row: SQLiteConnection.Row) -> MessageMapping {
        let direction = MessageMapping.Direction(rawValue: row.string(4) ?? "") ?? .xmppToMatrix
        var mapping = MessageMapping(
            room: row.id(0)!, eventID: row.id(1), stanzaID: row.id(2), originID: row.id(3), direction: direction,
            sender: MessageSender(stored: row.string(5) ?? "", direction: direction), state: MessageMapping.State(rawValue: row.string(6) ?? "") ?? .delivered,
            body: row.string(7), kind: MessageMapping.Kind(rawValue: row.string(10) ?? "") ?? .message, xmppID: row.id(11),
            nick: row.string(12), target: row.id(13), excerpt: row.string(14), payload: row.string(15))
        mapping.seq = Int64(row.int(8) ?? 0)
        mapping.createdAt = Date(timeIntervalSince1970: row.double(9) ?? 0)
        return mapping
    }

    /// Inserts a row unless one with the same event id, stanza-id or origin-id exists; returns whether it was new.
    static func insert(_ db: SQLiteConnection, _ mapping: MessageMapping) throws -> Bool {
        try db.run("""
            INSERT OR IGNORE INTO message_map (matrix_room, event_id, stanza_id, origin_id, direction, sender, state, body,
                                               kind, xmpp_id, nick, target_event, excerpt, payload)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, mapping.room, mapping.eventID, mapping.stanzaID, mapping.originID, mapping.direction.rawValue,
            mapping.sender.description, mapping.state.rawValue, mapping.body, mapping.kind.rawValue, mapping.xmppID,
            mapping.nick, mapping.target, mapping.excerpt, mapping.payload) > 0
    }
}
