import FoundationEssentials
import IsthmusCommon

/// `xmpp_sessions`: client mode's XEP-0198 session (issue 27), one row per account, so a restarted bridge resumes
/// the session instead of rejoining its rooms: the server's id for it, the counts both ways, and our stanzas the server
/// has not acknowledged yet (serialized, resent on resumption). Written as the session changes and before each ack
/// we give the server, so no ack we gave ever counts more than the row says.
enum XMPPSessionTable {
    /// Migration 15.
    static let schema = """
        CREATE TABLE xmpp_sessions (
            account                TEXT PRIMARY KEY,
            jid                    TEXT NOT NULL,
            session_id             TEXT NOT NULL,
            location               TEXT,
            inbound_handled        BIGINT NOT NULL,
            outbound_acknowledged  BIGINT NOT NULL,
            unacknowledged         TEXT NOT NULL
        );
        """
}

/// The XEP-0198 session of the bridge's account, as the store keeps it.
public struct StoredXMPPSession: Sendable, Equatable {
    /// The full JID the session is bound to.
    public var jid: JID
    /// The server's id for the session (`<enabled id>`).
    public var sessionID: String
    /// Where to reconnect to resume (`<enabled location>`), when the server said.
    public var location: String?
    /// How many of the server's stanzas we handled (the `h` we resume with).
    public var inboundHandled: UInt32
    /// The server's last `h` for ours.
    public var outboundAcknowledged: UInt32
    /// Our stanzas since that `h`, serialized, oldest first.
    public var unacknowledged: [String]

    public init(jid: JID, sessionID: String, location: String?, inboundHandled: UInt32, outboundAcknowledged: UInt32,
                unacknowledged: [String]) {
        self.jid = jid
        self.sessionID = sessionID
        self.location = location
        self.inboundHandled = inboundHandled
        self.outboundAcknowledged = outboundAcknowledged
        self.unacknowledged = unacknowledged
    }
}

extension Store {
    /// The session kept for `account` (its bare JID), if any. An unreadable row counts as none (a new session starts).
    public func xmppSession(account: JID) throws -> StoredXMPPSession? {
        try read { db in
            try db.query("""
                SELECT jid, session_id, location, inbound_handled, outbound_acknowledged, unacknowledged
                FROM xmpp_sessions WHERE account = ?
                """, account.bare.description) { row -> StoredXMPPSession? in
                guard let jid = row.string(0).flatMap(JID.init), let id = row.string(1),
                      let handled = row.int(3).flatMap(UInt32.init(exactly:)), let acknowledged = row.int(4).flatMap(UInt32.init(exactly:)),
                      let text = row.string(5), let stanzas = try? JSONDecoder().decode([String].self, from: Data(text.utf8)) else { return nil }
                return StoredXMPPSession(jid: jid, sessionID: id, location: row.string(2), inboundHandled: handled,
                                         outboundAcknowledged: acknowledged, unacknowledged: stanzas)
            }.first ?? nil
        }
    }

    /// Keeps `session` for `account` (nil: forgets it — the session was closed, or the server no longer holds it).
    public func saveXMPPSession(_ session: StoredXMPPSession?, account: JID) throws {
        let key = account.bare.description
        try write { db in
            guard let session else {
                _ = try db.run("DELETE FROM xmpp_sessions WHERE account = ?", key)
                return
            }
            let stanzas = String(decoding: (try? JSONEncoder().encode(session.unacknowledged)) ?? Data("[]".utf8), as: UTF8.self)
            _ = try db.run("""
                INSERT INTO xmpp_sessions (account, jid, session_id, location, inbound_handled, outbound_acknowledged, unacknowledged)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (account) DO UPDATE SET jid = excluded.jid, session_id = excluded.session_id,
                    location = excluded.location, inbound_handled = excluded.inbound_handled,
                    outbound_acknowledged = excluded.outbound_acknowledged, unacknowledged = excluded.unacknowledged
                """, key, session.jid.description, session.sessionID, session.location, Int(session.inboundHandled),
                Int(session.outboundAcknowledged), stanzas)
        }
    }
}
