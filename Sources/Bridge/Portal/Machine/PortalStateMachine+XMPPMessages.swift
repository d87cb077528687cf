import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import MessageFormatting
import XMPP

/// MUC messages to Matrix, exactly once: text (styled, with mentions), replies, corrections, retractions, reactions
/// and the room's moderations — each resolved against the message map first (RICH.md A1: which id each XEP names).
extension PortalStateMachine {
    /// One groupchat message (live or archived): our own reflection is a receipt; anything else goes to Matrix once
    /// (the message map is consulted first when the room assigned a stanza-id or the message refers to another).
    mutating func bridgeRoomMessage(_ message: RoomMessage) -> [Action] {
        var message = message
        // XEP-0359 §6: a stanza-id is the room's only if the room announces them; otherwise an occupant may have
        // put it there (a forged one could suppress another message), so the message is keyed like in a room without.
        if roomFeatures?.stanzaIDs == false { message.stanzaID = nil }
        if message.nick.isEmpty {
            // From the room itself: only a XEP-0425 moderation announcement concerns us (trusted from the room only).
            guard message.references.moderation != nil else { return [] }
            return [.lookUpBridged(message)]
        }
        message.references.moderation = nil
        if isOurOccupant(nick: message.nick, realJID: message.realJID) {
            let receipt = Action.recordReflection(originID: message.originID, stanzaID: message.stanzaID)
            // A Matrix event waited for this message's stanza-id: the drain goes on (after the receipt is recorded).
            if let wait = receiptWait, wait.originID == message.originID, canSend, drain == nil {
                return [receipt] + startDrainFromStore(selfCheck: false)
            }
            return [receipt]
        }
        let refers = message.references.refersToAnother   // (moderation cleared above: only the room may announce one)
        guard message.body != nil || refers else { return [] }
        if message.stanzaID != nil || refers { return [.lookUpBridged(message)] }
        return deliverToMatrix(message, targets: XMPPTargets())
    }

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

    /// Translates a message that is not in the map yet and sends it as its sender's ghost (a moderation: as the bot).
    mutating func deliverToMatrix(_ message: RoomMessage, targets: XMPPTargets) -> [Action] {
        let references = message.references
        let key = message.stanzaID ?? Self.digestKey(message, body: message.body ?? Self.describe(references))
        let sender = MessageSender.occupant(Self.occupantIdentity(message))
        var record = MessageMapping(room: configuration.room, eventID: nil, stanzaID: message.stanzaID, originID: message.originID,
                                    direction: .xmppToMatrix, sender: sender, state: .delivered,
                                    xmppID: message.id, nick: message.nick)
        if let moderation = references.moderation {
            guard let target = targets.moderated?.eventID else { return ignored(message, record, "moderation of a message that was not bridged") }
            record.kind = .retraction
            record.target = target
            return [.sendToMatrix(MatrixDelivery(
                message: message, key: key, ghost: configuration.botUserID, setup: nil,
                sends: [.redaction(target, reason: moderation.reason ?? "Removed by a moderator of the XMPP room", txnID: txnID(key))],
                record: record))]
        }
        guard let (ghost, setup) = planGhost(nick: message.nick, occupantID: message.occupantID, realJID: message.realJID,
                                             joinedNow: !message.fromArchive) else {
            return refused(message, key: key, reason: "no ghost id for the occupant \(message.nick)")
        }
        func delivery(_ sends: [MatrixSend], _ record: MessageMapping, reactions: ReactionChange = ReactionChange()) -> [Action] {
            [.sendToMatrix(MatrixDelivery(message: message, key: key, ghost: ghost, setup: setup, sends: sends, record: record,
                                          reactions: reactions))]
        }
        if references.retraction != nil {
            // XEP-0424: only the author may retract (the map is scoped to the sender's identity).
            guard let target = targets.retracted, target.sender == sender, let event = target.eventID else {
                return ignored(message, record, "retraction of a message that is not the sender's bridged message")
            }
            record.kind = .retraction
            record.target = event
            return delivery([.redaction(event, reason: nil, txnID: txnID(key))], record)
        }
        if let reactions = references.reactions {
            guard let target = targets.reacted, let event = target.eventID else {
                return ignored(message, record, "reactions to a message that was not bridged")
            }
            record.kind = .reaction
            record.target = event
            let (sends, change) = Self.reactionUpdate(to: reactions.keys, current: targets.reactions, on: event, in: configuration.room,
                                                      by: sender) { txnID(key, $0) }
            guard !sends.isEmpty else { return [.recordBridged(record, reactions: change)] }
            return delivery(sends, record, reactions: change)
        }
        guard let body = message.body else { return ignored(message, record, "nothing to bridge") }
        var text = body
        var relation: RelatesTo?
        var alsoMention: [UserID] = []
        if references.reply != nil, let target = targets.reply, let event = target.eventID {
            // XEP-0461 + XEP-0428: the quote is only for clients without replies; Matrix shows the reply itself.
            text = references.removingReplyQuote(from: body)
            relation = .reply(to: event)
            if let user = target.sender.matrixUser { alsoMention.append(user) }
        }
        var outgoing = RichTranslation.toMatrix(text, unstyled: references.unstyled,
                                                nicks: RichTranslation.mayAddressSomeone(text) ? puppetNicks : [:])
        for user in alsoMention where !outgoing.mentions.contains(user) { outgoing.mentions.append(user) }
        record.excerpt = RichTranslation.excerpt(outgoing.body)
        if references.replaces != nil, let original = targets.original, original.sender == sender, let event = original.eventID {
            // XEP-0308 → m.replace from the same ghost (a correction by anyone else never gets here: the lookup is per sender).
            outgoing = outgoing.replacing(event)
            record.kind = .edit
            record.target = event
        } else {
            outgoing.relatesTo = relation
            if let link = Self.fileLink(body: text, references: references) {
                return delivery([.media(link, fallback: outgoing, txnID: txnID(key))], record)
            }
        }
        return delivery([.message(outgoing, txnID: txnID(key))], record)
    }

    /// The Matrix calls that make `reactor`'s reactions to `event` the XEP-0444 set `keys` — a reaction for each new
    /// key, a redaction of each dropped one — and the change to record. `txnID` makes each call's transaction id from
    /// what it does (`+key`, `-key`). Pure; shared with the DMs.
    static func reactionUpdate(to keys: [String], current: [Reaction], on event: EventID, in room: RoomID, by reactor: MessageSender,
                               txnID: (String) -> ClientTransactionID) -> (sends: [MatrixSend], change: ReactionChange) {
        let added = keys.filter { key in !current.contains { $0.key == key } }
        let removed = current.filter { !keys.contains($0.key) }
        let sends = added.map { MatrixSend.reaction(target: event, key: $0, txnID: txnID("+" + $0)) }
            + removed.compactMap { reaction in reaction.eventID.map { MatrixSend.redaction($0, reason: nil, txnID: txnID("-" + reaction.key)) } }
        return (sends, ReactionChange(added: added.map { Reaction(room: room, target: event, reactor: reactor, key: $0, eventID: nil) },
                                      removed: removed))
    }

    /// The Matrix users' occupants by nick (who an XMPP message can mention).
    var puppetNicks: [String: UserID] {
        Dictionary(puppets.values.map { ($0.nick, $0.user) }, uniquingKeysWith: { first, _ in first })
    }

    /// The Matrix txnId of a delivery's send: from the stanza's key (and, for one of several sends, what it is for).
    func txnID(_ key: StanzaID, _ part: String? = nil) -> ClientTransactionID {
        let id = part.flatMap { StanzaID(key.rawValue + "\u{0}" + $0) } ?? key
        return configuration.naming.matrixTxnID(room: configuration.muc, stanzaID: id)
    }

    /// A message that refers to nothing the bridge can act on: recorded as handled (the archive catch-up does not
    /// bring it again) and logged.
    private func ignored(_ message: RoomMessage, _ record: MessageMapping, _ reason: String) -> [Action] {
        var actions: [Action] = [.log(LogEntry(level: .info, message: "XMPP message not bridged",
                                               metadata: ["xmpp.nick": message.nick, "reason": reason]))]
        if message.stanzaID != nil {
            var failed = record
            failed.state = .failed
            actions.append(.recordRefused(failed))
        }
        return actions
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

    mutating func matrixDelivered(_ delivery: MatrixDelivery, eventIDs: [EventID?]) -> [Action] {
        if let setup = delivery.setup { ghosts[setup.ghost] = setup.saved }
        let (record, reactions) = Self.recorded(delivery.record, delivery.reactions, eventIDs: eventIDs)
        return [
            .recordBridged(record, reactions: reactions),
            .log(LogEntry(level: .debug, message: "Bridged XMPP message", metadata: [
                "xmpp.stanza.id": delivery.key.rawValue, "matrix.event.id": record.eventID?.rawValue ?? "-", "kind": record.kind.rawValue,
            ])),
        ]
    }

    /// A delivery's record and reaction change with the event ids its Matrix calls got: each added reaction gets its
    /// own (a reaction set), else the record gets the first call's. Pure; shared with the DMs.
    static func recorded(_ record: MessageMapping, _ reactions: ReactionChange, eventIDs: [EventID?]) -> (MessageMapping, ReactionChange) {
        var record = record
        var reactions = reactions
        if record.kind == .reaction {
            for index in reactions.added.indices where index < eventIDs.count { reactions.added[index].eventID = eventIDs[index] }
        } else {
            record.eventID = eventIDs.first ?? nil
        }
        return (record, reactions)
    }

    /// `ghostReady`: the delivery's ghost setup was made (and saved) before the failure: the model takes it in, and a
    /// retry does not make it again.
    mutating func matrixDeliveryFailed(_ delivery: MatrixDelivery, _ failure: MatrixFailure, ghostReady: Bool = false) -> [Action] {
        var delivery = delivery
        if ghostReady, let setup = delivery.setup {
            ghosts[setup.ghost] = setup.saved
            delivery.setup = nil
        }
        switch failure {
        case .unavailable(let reason):
            // The homeserver is down or overloaded: wait (this room's later events wait too, keeping order).
            let pause = configuration.matrixBackoff.pause(after: delivery.attempt)
            var next = delivery
            next.attempt += 1
            return [.log(LogEntry(level: .warning, message: "Homeserver unavailable; retrying",
                                  metadata: ["xmpp.stanza.id": delivery.key.rawValue, "error": reason])),
                    .retrySendToMatrix(next, after: pause)]
        case .refused(let reason):
            return refused(delivery.message, key: delivery.key, reason: reason, tellSender: delivery.record.kind == .message)
        }
    }

    /// A ghost held for joined is not in the room (found by scripts/chaos, seed 2026: it was made to leave just before
    /// a crash, and the store still said joined): it joins again (invited first where needed) and the delivery goes
    /// once more. A ghost refused right after it joined (banned, or it may not speak) keeps the refusal.
    mutating func ghostNotInRoom(_ delivery: MatrixDelivery, reason: String) -> [Action] {
        let message = delivery.message
        // The refusal came from the send, so the setup before it was made (and saved): the model takes it in.
        if let setup = delivery.setup { ghosts[setup.ghost] = setup.saved }
        guard !delivery.rejoinIsFinal else {
            return refused(message, key: delivery.key, reason: reason, tellSender: delivery.record.kind == .message)
        }
        ghosts[delivery.ghost]?.joined = false
        guard let (ghost, setup) = planGhost(nick: message.nick, occupantID: message.occupantID, realJID: message.realJID, joinedNow: false),
              ghost == delivery.ghost, let setup else {
            return refused(message, key: delivery.key, reason: reason, tellSender: delivery.record.kind == .message)
        }
        var next = delivery
        next.rejoined = true
        next.setup = setup
        return [.log(LogEntry(level: .notice, message: "A ghost was not in the room; joining it and sending again",
                              metadata: ["matrix.user.id": ghost.rawValue, "xmpp.stanza.id": delivery.key.rawValue])),
                .sendToMatrix(next)]
    }

    /// Matrix refused a message for good: it is recorded as failed (so it is not retried) and its sender is told.
    private func refused(_ message: RoomMessage, key: StanzaID, reason: String, tellSender: Bool = true) -> [Action] {
        var actions: [Action] = [.log(LogEntry(level: .error, message: "Could not bridge an XMPP message to Matrix",
                                               metadata: ["xmpp.stanza.id": key.rawValue, "error": reason]))]
        if let stanzaID = message.stanzaID {
            actions.append(.recordRefused(MessageMapping(room: configuration.room, eventID: nil, stanzaID: stanzaID, originID: nil,
                                                         direction: .xmppToMatrix, sender: .occupant(Self.occupantIdentity(message)),
                                                         state: .failed)))
        }
        if tellSender, !message.fromArchive, botJoined, !message.nick.isEmpty, let occupant = configuration.muc.with(resource: message.nick) {
            actions.append(.sendPrivate(to: occupant, body: "Your message could not be delivered to Matrix: \(reason)"))
        }
        return actions
    }
}
