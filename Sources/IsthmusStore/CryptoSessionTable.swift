import IsthmusCommon

/// The ghosts' end-to-end encryption sessions (issue 30; ENCRYPTION.md §3): `olm_sessions`, the Olm sessions each
/// ghost's device has with other devices (by the peer's Curve25519 identity key; at most ``Store/olmSessionsKept``
/// per pair, the most recently used); `megolm_inbound_sessions`, the room keys Matrix users' devices shared with the
/// ghosts (by room, session id and the user who shared it — a key only ever decrypts that user's events, so another
/// member forwarding it first cannot take it over — with its device's keys as the Olm message claimed them); `megolm_message_indexes`, which event used each message index
/// of a session, so a replayed ciphertext is refused; `held_encrypted_events`, encrypted events that came before their
/// room key, kept (as the homeserver sent them) until it comes or the wait is over. The sessions are sealed by the
/// bridge before they reach the store.
enum CryptoSessionTable {
    /// Migration 23 on SQLite.
    static let schema = """
        CREATE TABLE olm_sessions (
            user_id      TEXT NOT NULL,
            sender_key   TEXT NOT NULL,
            session_id   TEXT NOT NULL,
            pickle       BLOB NOT NULL,
            last_used    BIGINT NOT NULL,
            PRIMARY KEY (user_id, sender_key, session_id)
        );
        CREATE TABLE megolm_inbound_sessions (
            room_id      TEXT NOT NULL,
            session_id   TEXT NOT NULL,
            sender       TEXT NOT NULL,
            sender_key   TEXT NOT NULL,
            signing_key  TEXT NOT NULL,
            pickle       BLOB NOT NULL,
            PRIMARY KEY (room_id, session_id, sender)
        );
        CREATE TABLE megolm_message_indexes (
            room_id        TEXT NOT NULL,
            session_id     TEXT NOT NULL,
            message_index  BIGINT NOT NULL,
            event_id       TEXT NOT NULL,
            PRIMARY KEY (room_id, session_id, message_index)
        );
        CREATE TABLE held_encrypted_events (
            event_id     TEXT PRIMARY KEY,
            room_id      TEXT NOT NULL,
            session_id   TEXT NOT NULL,
            event        TEXT NOT NULL,
            held_at      BIGINT NOT NULL
        );
        CREATE INDEX held_encrypted_events_by_session ON held_encrypted_events (room_id, session_id);
        """
    /// Migration 23 on PostgreSQL.
    static let postgresSchema = """
        CREATE TABLE olm_sessions (
            user_id      TEXT NOT NULL,
            sender_key   TEXT NOT NULL,
            session_id   TEXT NOT NULL,
            pickle       BYTEA NOT NULL,
            last_used    BIGINT NOT NULL,
            PRIMARY KEY (user_id, sender_key, session_id)
        );
        CREATE TABLE megolm_inbound_sessions (
            room_id      TEXT NOT NULL,
            session_id   TEXT NOT NULL,
            sender       TEXT NOT NULL,
            sender_key   TEXT NOT NULL,
            signing_key  TEXT NOT NULL,
            pickle       BYTEA NOT NULL,
            PRIMARY KEY (room_id, session_id, sender)
        );
        CREATE TABLE megolm_message_indexes (
            room_id        TEXT NOT NULL,
            session_id     TEXT NOT NULL,
            message_index  BIGINT NOT NULL,
            event_id       TEXT NOT NULL,
            PRIMARY KEY (room_id, session_id, message_index)
        );
        CREATE TABLE held_encrypted_events (
            event_id     TEXT PRIMARY KEY,
            room_id      TEXT NOT NULL,
            session_id   TEXT NOT NULL,
            event        TEXT NOT NULL,
            held_at      BIGINT NOT NULL
        );
        CREATE INDEX held_encrypted_events_by_session ON held_encrypted_events (room_id, session_id);
        """
}

/// An Olm session of a ghost's device as stored (sealed).
public struct StoredOlmSession: Sendable, Equatable {
    public var user: UserID
    /// The peer device's Curve25519 identity key.
    public var senderKey: String
    public var sessionID: String
    public var pickle: [UInt8]
    /// When it last encrypted or decrypted (milliseconds since 1970): the newest is the one to send with.
    public var lastUsed: Int64

    public init(user: UserID, senderKey: String, sessionID: String, pickle: [UInt8], lastUsed: Int64) {
        self.user = user
        self.senderKey = senderKey
        self.sessionID = sessionID
        self.pickle = pickle
        self.lastUsed = lastUsed
    }
}

/// A room key a Matrix user's device shared with a ghost, as stored (sealed).
public struct StoredMegolmSession: Sendable, Equatable {
    public var room: RoomID
    public var sessionID: String
    /// The user whose device shared it (over Olm): only that user's events may be decrypted with it.
    public var sender: UserID
    /// That device's Curve25519 identity key and its claimed Ed25519 key.
    public var senderKey: String
    public var signingKey: String
    public var pickle: [UInt8]

    public init(room: RoomID, sessionID: String, sender: UserID, senderKey: String, signingKey: String, pickle: [UInt8]) {
        self.room = room
        self.sessionID = sessionID
        self.sender = sender
        self.senderKey = senderKey
        self.signingKey = signingKey
        self.pickle = pickle
    }
}

/// What one to-device message changed, kept in one commit: the ghost's account (a one-time key used), its Olm
/// session, and the room key it carried.
public struct ToDeviceChanges: Sendable, Equatable {
    public var account: (user: UserID, pickle: [UInt8])?
    public var olmSession: StoredOlmSession?
    public var roomKey: StoredMegolmSession?

    public init(account: (user: UserID, pickle: [UInt8])? = nil, olmSession: StoredOlmSession? = nil, roomKey: StoredMegolmSession? = nil) {
        self.account = account
        self.olmSession = olmSession
        self.roomKey = roomKey
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.account?.user == rhs.account?.user && lhs.account?.pickle == rhs.account?.pickle
            && lhs.olmSession == rhs.olmSession && lhs.roomKey == rhs.roomKey
    }
}

extension Store {
    /// Olm sessions kept per ghost and peer device: a peer that keeps starting new ones (each pre-key message to the
    /// fallback key makes one) cannot grow the table; the least recently used go.
    public static let olmSessionsKept = 8

    /// `user`'s Olm sessions with the device whose identity key is `senderKey`, the most recently used first.
    public func olmSessions(of user: UserID, with senderKey: String) throws -> [StoredOlmSession] {
        try read { db in
            try db.query("""
                SELECT session_id, pickle, last_used FROM olm_sessions WHERE user_id = ? AND sender_key = ?
                ORDER BY last_used DESC, session_id LIMIT \(Self.olmSessionsKept)
                """, user, senderKey) { row in
                row.string(0).map { StoredOlmSession(user: user, senderKey: senderKey, sessionID: $0, pickle: row.blob(1),
                                                     lastUsed: Int64(row.int(2) ?? 0)) }
            }.compactMap { $0 }
        }
    }

    /// Keeps what to-device messages changed, in one commit (before the transaction that brought them is
    /// acknowledged: the homeserver never sends them again). A room key already kept is not replaced.
    public func keepToDeviceChanges(_ changes: [ToDeviceChanges]) throws {
        guard !changes.isEmpty else { return }
        try write { db in
            for change in changes {
                if let (user, pickle) = change.account {
                    _ = try db.run("UPDATE ghost_devices SET account = ? WHERE user_id = ?", SQLValue.blob(pickle), user)
                }
                if let session = change.olmSession {
                    _ = try db.run("""
                        INSERT INTO olm_sessions (user_id, sender_key, session_id, pickle, last_used) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT (user_id, sender_key, session_id) DO UPDATE SET pickle = excluded.pickle, last_used = excluded.last_used
                        """, session.user, session.senderKey, session.sessionID, SQLValue.blob(session.pickle), session.lastUsed)
                    _ = try db.run("""
                        DELETE FROM olm_sessions WHERE user_id = ? AND sender_key = ? AND session_id NOT IN (
                            SELECT session_id FROM olm_sessions WHERE user_id = ? AND sender_key = ?
                            ORDER BY last_used DESC, session_id LIMIT \(Self.olmSessionsKept))
                        """, session.user, session.senderKey, session.user, session.senderKey)
                }
                if let key = change.roomKey {
                    _ = try db.run("""
                        INSERT INTO megolm_inbound_sessions (room_id, session_id, sender, sender_key, signing_key, pickle)
                        VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (room_id, session_id, sender) DO NOTHING
                        """, key.room, key.sessionID, key.sender, key.senderKey, key.signingKey, SQLValue.blob(key.pickle))
                }
            }
        }
    }

    /// The room key `sessionID` of `room` that a device of `sender` shared with a ghost, if any.
    public func megolmSession(_ sessionID: String, in room: RoomID, sharedBy sender: UserID) throws -> StoredMegolmSession? {
        try read { db in
            try db.query("""
                SELECT sender_key, signing_key, pickle FROM megolm_inbound_sessions WHERE room_id = ? AND session_id = ? AND sender = ?
                """, room, sessionID, sender) { row -> StoredMegolmSession? in
                guard let senderKey = row.string(0), let signingKey = row.string(1) else { return nil }
                return StoredMegolmSession(room: room, sessionID: sessionID, sender: sender, senderKey: senderKey,
                                           signingKey: signingKey, pickle: row.blob(2))
            }.first ?? nil
        }
    }

    /// Records that `event` used message `index` of session `sessionID` in `room`; false when another event used it
    /// before (a replayed ciphertext, to refuse). The same event again (a transaction sent again) is true.
    public func recordMegolmIndex(_ index: UInt32, of sessionID: String, in room: RoomID, by event: EventID) throws -> Bool {
        try write { db in
            _ = try db.run("""
                INSERT INTO megolm_message_indexes (room_id, session_id, message_index, event_id) VALUES (?, ?, ?, ?)
                ON CONFLICT (room_id, session_id, message_index) DO NOTHING
                """, room, sessionID, Int64(index), event)
            let users = try db.query("SELECT event_id FROM megolm_message_indexes WHERE room_id = ? AND session_id = ? AND message_index = ?",
                                     room, sessionID, Int64(index)) { $0.string(0) }
            return users.first == event.rawValue
        }
    }
}

/// An encrypted room event that came before its room key, as kept until the key comes.
public struct HeldEncryptedEvent: Sendable, Equatable {
    public var eventID: EventID
    public var room: RoomID
    public var sessionID: String
    /// The event as the homeserver sent it (JSON).
    public var event: String
    /// When it was held (milliseconds since 1970).
    public var heldAt: Int64

    public init(eventID: EventID, room: RoomID, sessionID: String, event: String, heldAt: Int64) {
        self.eventID = eventID
        self.room = room
        self.sessionID = sessionID
        self.event = event
        self.heldAt = heldAt
    }
}

extension Store {
    /// Keeps `events` until their keys come (an event kept already stays as it was).
    public func holdEncryptedEvents(_ events: [HeldEncryptedEvent]) throws {
        guard !events.isEmpty else { return }
        try write { db in
            for held in events {
                _ = try db.run("""
                    INSERT INTO held_encrypted_events (event_id, room_id, session_id, event, held_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (event_id) DO NOTHING
                    """, held.eventID, held.room, held.sessionID, held.event, held.heldAt)
            }
        }
    }

    /// The events held for the room key `sessionID` of `room`, oldest first.
    public func heldEncryptedEvents(for sessionID: String, in room: RoomID) throws -> [HeldEncryptedEvent] {
        try read { db in
            try db.query("""
                SELECT event_id, event, held_at FROM held_encrypted_events WHERE room_id = ? AND session_id = ? ORDER BY held_at, event_id
                """, room, sessionID) { row in
                row.id(0).map { HeldEncryptedEvent(eventID: $0, room: room, sessionID: sessionID, event: row.string(1) ?? "",
                                                   heldAt: Int64(row.int(2) ?? 0)) }
            }.compactMap { $0 }
        }
    }

    /// Up to `limit` events held since before `moment` (milliseconds since 1970), oldest first.
    public func heldEncryptedEvents(heldBefore moment: Int64, limit: Int = 100) throws -> [HeldEncryptedEvent] {
        try read { db in
            try db.query("""
                SELECT event_id, room_id, session_id, event, held_at FROM held_encrypted_events WHERE held_at < ?
                ORDER BY held_at, event_id LIMIT \(limit)
                """, moment) { row in
                guard let id: EventID = row.id(0), let room: RoomID = row.id(1), let session = row.string(2) else { return nil }
                return HeldEncryptedEvent(eventID: id, room: room, sessionID: session, event: row.string(3) ?? "", heldAt: Int64(row.int(4) ?? 0))
            }.compactMap { $0 }
        }
    }

    /// Forgets held events (once what became of them is queued).
    public func releaseHeldEncryptedEvents(_ events: [EventID]) throws {
        guard !events.isEmpty else { return }
        try write { db in
            for event in events { _ = try db.run("DELETE FROM held_encrypted_events WHERE event_id = ?", event) }
        }
    }
}
