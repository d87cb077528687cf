import IsthmusCommon

/// What a portal handled in a burst of MUC traffic and records afterwards, all in one commit (issue 26): a busy room
/// pays one commit per burst, not one per message. Written in the order handled; each moves the room's resume point to
/// its stanza-id, so the point ends at the last one's.
///
/// Recording late loses nothing: until the commit, the resume point has not moved past any of them, so after a crash
/// catch-up reads them from the archive again. A reflection is then receipted again; an XMPP message is looked up,
/// not found, and sent again with the same transaction id (derived from its stanza-id), which the homeserver answers
/// with the event it made the first time. The one exception (docs/reliability.md, "What it does not cover"): Synapse
/// remembers an appservice's transaction ids in memory only, so if the bridge crashes *and* the homeserver restarts
/// before the bridge is back, the sent messages whose records the crash cut short arrive twice. Recording each message
/// alone narrowed that double fault to the one message in flight; gathered, it is at most
/// `Portal.maximumPendingRecords`.
public enum RoomRecord: Sendable {
    /// A MUC reflection: our Matrix → XMPP message (its origin-id) delivered, or only the resume point moved.
    case reflection(ReflectionReceipt)
    /// An XMPP → Matrix message: bridged (`delivered`, with its event id) or refused for good (`failed`), and the
    /// reaction changes it made.
    case fromXMPP(MessageMapping, reactions: ReactionChange)

    /// Where the room's resume point moves with this record (nil: it stays).
    var stanzaID: StanzaID? {
        switch self {
        case .reflection(let receipt): receipt.stanzaID
        case .fromXMPP(let mapping, _): mapping.stanzaID
        }
    }
}

extension Store {
    /// Writes a portal's gathered records in one commit, as if each were recorded in turn (``RoomRecord``). Returns
    /// the origin-ids newly delivered, in order: a reflection of our message not yet delivered marks it delivered with
    /// its stanza-id, once (a second reflection of it, from a resend, changes nothing).
    public func record(room: RoomID, _ records: [RoomRecord]) async throws -> [OriginID] {
        try await groupedWrite(planned: Self.recordWrite(dialect, room: room, records))
    }

    /// ``record(room:_:)``'s statements, given up front (on PostgreSQL a group of such writes is one round trip).
    static func recordWrite(_ dialect: SQLDialect, room: RoomID, _ records: [RoomRecord]) -> PlannedWrite<[OriginID]> {
        var statements: [PlannedStatement] = []
        var ours: [(OriginID, StanzaID?)] = []
        var fromXMPP: [MessageMapping] = []
        for record in records {
            switch record {
            case .reflection(let receipt):
                if let originID = receipt.originID { ours.append((originID, receipt.stanzaID)) }
            case .fromXMPP(var mapping, let reactions):
                statements += ReactionTable.statements(reactions)
                mapping.direction = .xmppToMatrix
                mapping.body = nil
                mapping.payload = nil
                fromXMPP.append(mapping)
            }
        }
        // Each record moves the resume point to its stanza-id: the last one with a stanza-id wins. The two kinds
        // touch different rows (ours are `m2x`, theirs `x2m`), so their statements' order does not matter.
        let resumePoint = records.last(where: { $0.stanzaID != nil })?.stanzaID
        let mark = MessageMapTable.markDelivered(dialect, room: room, ours, resumePoint: fromXMPP.isEmpty ? resumePoint : nil)
        let marks = statements.count..<(statements.count + mark.statements.count)
        statements += mark.statements
        if !fromXMPP.isEmpty { statements += MessageMapTable.insertFromXMPP(dialect, fromXMPP, resumePoint: resumePoint) }
        return PlannedWrite(statements: statements) { results in
            let marked = mark.result(Array(results[marks]))
            var seen: Set<OriginID> = []
            return ours.map(\.0).filter { marked.contains($0) && seen.insert($0).inserted }
        }
    }
}

/// A MUC message's reflection as the message map records it: our `originID` when it was one of ours, and the room's
/// `stanzaID` (the resume point).
public struct ReflectionReceipt: Sendable, Equatable {
    public var originID: OriginID?
    public var stanzaID: StanzaID?

    public init(originID: OriginID?, stanzaID: StanzaID?) {
        self.originID = originID
        self.stanzaID = stanzaID
    }
}
