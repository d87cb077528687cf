import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import MessageFormatting
import XMPP

/// The pure rules of MUC messages to Matrix that the rooms (``MatrixDeliveryMachine``) and the DMs share: dedupe keys,
/// the sender's identity, reaction sets, a delivery's record, the earlier copy of a retried send.
extension PortalStateMachine {
    /// Whether a message or presence from `nick` is one of ours (the bridge's occupant or a puppet).
    func isOurOccupant(nick: String, realJID: JID?) -> Bool {
        Self.isOurOccupant(nick: nick, realJID: realJID, naming: configuration.naming, botNick: botNick, puppets: puppets)
    }

    /// The same, for a caller holding copies of the model (see ``EphemeralMachine/Room``).
    static func isOurOccupant(nick: String, realJID: JID?, naming: BridgeNaming, botNick: String, puppets: [UserID: Puppet]) -> Bool {
        if let realJID, naming.isOurs(realJID) { return true }
        if nick == botNick { return true }
        // Joined or not: after a restart puppets are rejoining, and archived reflections carry their nicks.
        return puppets.values.contains { $0.nick == nick }
    }

    /// The Matrix calls that make `reactor`'s reactions to `event` the XEP-0444 set `keys` — a reaction for each new
    /// key, a redaction of each dropped one — and the change to record. `txnID` makes each call's transaction id from
    /// what it does (`+key`, `-key`). Pure; shared with the DMs.
    ///
    /// `shared` (Matrix client mode, where one account reacts for every occupant): the other occupants' reactions to
    /// the message. A key another occupant holds is not sent again (this reactor's row shares the account's event),
    /// and one this reactor takes back stays while another holds it: its event passes to that reactor's row instead of
    /// being redacted.
    static func reactionUpdate(to keys: [String], current: [Reaction], on event: EventID, in room: RoomID, by reactor: MessageSender,
                               shared: [Reaction]? = nil,
                               txnID: (String) -> ClientTransactionID) -> (sends: [MatrixSend], change: ReactionChange) {
        let added = keys.filter { key in !current.contains { $0.key == key } }
        let removed = current.filter { !keys.contains($0.key) }
        let others = shared ?? []
        var sends: [MatrixSend] = []
        var change = ReactionChange(added: added.map { Reaction(room: room, target: event, reactor: reactor, key: $0, eventID: nil) },
                                    removed: removed)
        for key in added where !others.contains(where: { $0.key == key }) {
            sends.append(.reaction(target: event, key: key, txnID: txnID("+" + key)))
        }
        for reaction in removed {
            guard let eventID = reaction.eventID else { continue }
            if var heir = others.first(where: { $0.key == reaction.key }) {
                heir.eventID = eventID
                change.added.append(heir)   // an upsert: the holder's row now names the account's event
            } else {
                sends.append(.redaction(eventID, reason: nil, txnID: txnID("-" + reaction.key)))
            }
        }
        return (sends, change)
    }

    /// The dedupe key of a message from a room that assigns no stanza-id (a room without an archive): the sender as
    /// the room identifies it (real JID, XEP-0421 occupant id, else nick) and the id the sender gave the message (its
    /// XEP-0359 origin-id, else the stanza's `id`), so a copy of the same message gets the same key (and the same
    /// Matrix transaction id) while a different message with the same text from the same sender does not. Only a
    /// message with neither id falls back to its text. Pure.
    static func digestKey(_ message: RoomMessage, body: String) -> StanzaID {
        let sender = MessageSender.occupant(occupantIdentity(message)).description
        let material = if let id = message.originID?.rawValue ?? message.id?.rawValue {
            "\(sender)\u{0}id\u{0}\(id)"
        } else {
            "\(sender)\u{0}body\u{0}\(body)"
        }
        return StanzaID("noid:\(Digest.hex(Digest.sha256(Array(material.utf8)).prefix(12)))")!
    }

    /// A body-less message's stand-in text for its dedupe key.
    static func describe(_ references: MessageReferences) -> String {
        if let reactions = references.reactions { return "reactions\u{0}\(reactions.id)\u{0}" + reactions.keys.joined(separator: "\u{0}") }
        if let retraction = references.retraction { return "retract\u{0}\(retraction.id)" }
        if let moderation = references.moderation { return "moderate\u{0}\(moderation.stanzaID)" }
        return ""
    }

    /// The sender of a MUC message as well as the room identifies it.
    static func occupantIdentity(_ message: RoomMessage) -> MessageSender.OccupantIdentity {
        if let realJID = message.realJID { return .realJID(realJID.bare) }
        if let occupantID = message.occupantID { return .occupantID(occupantID) }
        return .nick(message.nick)
    }

    /// Before a message is sent again after the homeserver was unavailable: its earlier attempt may have been
    /// stored although the answer never came (the homeserver stopped while answering). A transaction id does not
    /// guard against that across a homeserver restart (Synapse keeps an appservice user's transaction ids in memory
    /// only), so the room's recent timeline is searched for the copy: an event from the same ghost with the same
    /// content that no other message of the bridge is mapped to (`mapped`: the events the message map or the inbox
    /// knows). Only for a delivery that is one message (a repeated reaction is refused as a duplicate, a repeated
    /// redaction changes nothing). Found by scripts/chaos (seed 11). Pure.
    static func earlierCopy(of delivery: MatrixDelivery, in timeline: [MatrixTimelineEntry], mapped: Set<EventID>) -> EventID? {
        guard delivery.sends.count == 1, case .message(let outgoing, _) = delivery.sends[0] else { return nil }
        return timeline.last { entry in
            guard !mapped.contains(entry.eventID), let event = entry.event, event.sender == delivery.ghost,
                  case .message(let msgtype, let body, _) = event.content else { return false }
            return msgtype.rawValue == outgoing.kind.rawValue && body == (outgoing.replacement?.body ?? outgoing.body)
        }?.eventID
    }

    /// A delivery's record and reaction change with the event ids its Matrix calls (`sends`, in order) got: each added
    /// reaction gets its own reaction send's, matched by key (a key shared in Matrix client mode had none sent, and
    /// keeps the event it was given), else the record gets the first call's. Pure; shared with the DMs.
    static func recorded(_ record: MessageMapping, _ reactions: ReactionChange, sends: [MatrixSend],
                         eventIDs: [EventID?]) -> (MessageMapping, ReactionChange) {
        var record = record
        var reactions = reactions
        if record.kind == .reaction {
            var sent: [String: EventID?] = [:]
            for (send, eventID) in zip(sends, eventIDs) {
                if case .reaction(_, let key, _) = send { sent[key] = eventID }
            }
            for index in reactions.added.indices {
                if let eventID = sent[reactions.added[index].key] { reactions.added[index].eventID = eventID }
            }
        } else {
            record.eventID = eventIDs.first ?? nil
        }
        return (record, reactions)
    }
}
