import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import MessageFormatting
import XMPP

/// What a MUC message becomes on Matrix: text (styled, with mentions), a reply, a correction, a retraction, reactions
/// or a moderation by the room — each resolved against the targets the message map gave (RICH.md A1).
extension MatrixDeliveryMachine {
    /// Translates a message that is not in the map yet and sends it as its sender's ghost (a moderation: as the bot).
    func deliver(_ message: RoomMessage, targets: XMPPTargets, in room: Room) -> [Output] {
        let references = message.references
        let key = message.stanzaID ?? PortalStateMachine.digestKey(message, body: message.body ?? PortalStateMachine.describe(references))
        let sender = MessageSender.occupant(PortalStateMachine.occupantIdentity(message))
        var record = MessageMapping(room: configuration.room, eventID: nil, stanzaID: message.stanzaID, originID: message.originID,
                                    direction: .xmppToMatrix, sender: sender, state: .delivered,
                                    xmppID: message.id, nick: message.nick)
        if let moderation = references.moderation {
            guard let target = targets.moderated?.eventID else { return ignored(message, record, "moderation of a message that was not bridged") }
            record.kind = .retraction
            record.target = target
            return [.perform(.send(MatrixDelivery(
                message: message, key: key, ghost: configuration.botUserID, setup: nil,
                sends: [.redaction(target, reason: moderation.reason ?? "Removed by a moderator of the XMPP room", txnID: txnID(key))],
                record: record)))]
        }
        guard let plan = room.ghostPlan(message, !message.fromArchive, nil) else {
            return refused(message, key: key, reason: "no ghost id for the occupant \(message.nick)", in: room)
        }
        let known: [Output] = plan.occupant.map { [.portal(.occupantSeen($0))] } ?? []
        func delivery(_ sends: [MatrixSend], _ record: MessageMapping, reactions: ReactionChange = ReactionChange()) -> [Output] {
            known + [.perform(.send(MatrixDelivery(message: message, key: key, ghost: plan.ghost, setup: plan.setup, sends: sends,
                                                   record: record, reactions: reactions)))]
        }
        if references.retraction != nil {
            // XEP-0424: only the author may retract (the map is scoped to the sender's identity).
            guard let target = targets.retracted, target.sender == sender, let event = target.eventID else {
                return known + ignored(message, record, "retraction of a message that is not the sender's bridged message")
            }
            record.kind = .retraction
            record.target = event
            return delivery([.redaction(event, reason: nil, txnID: txnID(key))], record)
        }
        if let reactions = references.reactions {
            guard let target = targets.reacted, let event = target.eventID else {
                return known + ignored(message, record, "reactions to a message that was not bridged")
            }
            record.kind = .reaction
            record.target = event
            let (sends, change) = PortalStateMachine.reactionUpdate(
                to: reactions.keys, current: targets.reactions, on: event, in: configuration.room, by: sender,
                shared: configuration.relay == nil ? nil : targets.othersReactions) { txnID(key, $0) }
            guard !sends.isEmpty else { return known + [.perform(.recordBridged(record, reactions: change))] }
            return delivery(sends, record, reactions: change)
        }
        guard let body = message.body else { return known + ignored(message, record, "nothing to bridge") }
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
                                                nicks: RichTranslation.mayAddressSomeone(text) ? room.puppetNicks() : [:])
        for user in alsoMention where !outgoing.mentions.contains(user) { outgoing.mentions.append(user) }
        record.excerpt = RichTranslation.excerpt(outgoing.body)
        if references.replaces != nil, let original = targets.original, original.sender == sender, let event = original.eventID {
            // XEP-0308 → m.replace from the same ghost (a correction by anyone else never gets here: the lookup is per sender).
            outgoing = outgoing.replacing(event)
            record.kind = .edit
            record.target = event
        } else {
            outgoing.relatesTo = relation
            if let link = PortalStateMachine.fileLink(body: text, references: references) {
                return delivery([.media(link, fallback: relayed(outgoing, message, ghost: plan.ghost), txnID: txnID(key))], record)
            }
        }
        return delivery([.message(relayed(outgoing, message, ghost: plan.ghost), txnID: txnID(key))], record)
    }

    /// Matrix client mode: the message as the account sends it for its occupant (the ghost's id is the profile's stable
    /// id: the ghost is only a name there); otherwise as it is.
    private func relayed(_ outgoing: OutgoingMatrixMessage, _ message: RoomMessage, ghost: UserID) -> OutgoingMatrixMessage {
        configuration.relay?.relaying(outgoing, nick: message.nick, id: ghost.rawValue) ?? outgoing
    }

    /// A message that refers to nothing the bridge can act on: recorded as handled (the archive catch-up does not
    /// bring it again) and logged.
    private func ignored(_ message: RoomMessage, _ record: MessageMapping, _ reason: String) -> [Output] {
        var outputs: [Output] = [.perform(.log(LogEntry(level: .info, message: "XMPP message not bridged",
                                                        metadata: ["xmpp.nick": message.nick, "reason": reason])))]
        if message.stanzaID != nil {
            var failed = record
            failed.state = .failed
            outputs.append(.perform(.recordRefused(failed)))
        }
        return outputs
    }

}
