import IsthmusCommon
import IsthmusStore

/// What a message or event refers to, read from the message map and the reactions table — the same lookups for a
/// linked room (``Portal``) and a DM room (``DirectChats``). Run on the store's thread, one read after another.
extension Store {
    /// The mapped messages an XMPP message refers to. Ids are resolved as RICH.md A1 says: the room's stanza-id first,
    /// then one of our origin-ids, then an `id` attribute or origin-id the sender chose — only among that sender's own
    /// messages. A DM's private messages carry no stanza-id, so there they are resolved by the latter two.
    /// `relayed` (Matrix client mode): the other occupants' reactions to a reacted message are read too.
    func xmppTargets(of message: RoomMessage, in room: RoomID, relayed: Bool = false) throws -> PortalStateMachine.XMPPTargets {
        let sender = MessageSender.occupant(PortalStateMachine.occupantIdentity(message))
        let references = message.references
        var targets = PortalStateMachine.XMPPTargets()
        if let reply = references.reply { targets.reply = try original(of: referenced(reply.id, sender: sender, in: room), in: room) }
        if let id = references.replaces { targets.original = try original(of: sendersOwn(id, sender: sender, in: room), in: room) }
        switch references.retraction {
        case .current(let id)?:
            targets.retracted = try StanzaID(id).flatMap { try mapping(room: room, stanzaID: $0) } ?? sendersOwn(id, sender: sender, in: room)
        case .legacy(let id)?:
            targets.retracted = try OriginID(id).flatMap { try mapping(room: room, sender: sender, originID: $0) }
        case nil:
            break
        }
        if let reactions = references.reactions, let target = try original(of: referenced(reactions.id, sender: sender, in: room), in: room),
           let event = target.eventID {
            targets.reacted = target
            targets.reactions = try self.reactions(room: room, target: event, reactor: sender)
            if relayed { targets.othersReactions = try occupantsReactions(room: room, target: event).filter { $0.reactor != sender } }
        }
        if let moderation = references.moderation {
            targets.moderated = try StanzaID(moderation.stanzaID).flatMap { try mapping(room: room, stanzaID: $0) }
        }
        return targets
    }

    /// Whether the XMPP message `stanzaID` names was bridged already, and if not, what it refers to: the delivery
    /// machine's lookups for one message in one call on the store's thread (one hop, not two).
    func xmppLookUp(_ message: RoomMessage, in room: RoomID, relayed: Bool) throws -> (bridged: Bool, targets: PortalStateMachine.XMPPTargets) {
        if let stanzaID = message.stanzaID, try mapping(room: room, stanzaID: stanzaID) != nil {
            return (true, PortalStateMachine.XMPPTargets())
        }
        return (false, try xmppTargets(of: message, in: room, relayed: relayed))
    }

    /// What a Matrix event refers to. (A media message's upload to the XMPP server is the portal's to add.)
    func matrixTargets(of event: MatrixRoomEvent, in room: RoomID, relayed: Bool = false) throws -> PortalStateMachine.MatrixTargets {
        var targets = PortalStateMachine.MatrixTargets()
        switch event.content {
        case .message(_, _, let details):
            targets.reply = try details?.replyTo.flatMap { try mapping(room: room, eventID: $0) }
            targets.original = try details?.replaces.flatMap { try mapping(room: room, eventID: $0) }
        case .reaction(let target, _):
            targets.reacted = try mapping(room: room, eventID: target)
            targets.reactions = try reactions(room: room, target: target, reactor: .matrix(event.sender))
            if relayed { targets.relayedReactions = try matrixUsersReactions(room: room, target: target) }
        case .redaction(let target, _):
            if let reaction = try reaction(room: room, eventID: target), reaction.reactor.matrixUser != nil {
                targets.redactedReaction = reaction
                targets.reacted = try mapping(room: room, eventID: reaction.target)
                targets.reactions = try reactions(room: room, target: reaction.target, reactor: reaction.reactor)
                if relayed { targets.relayedReactions = try matrixUsersReactions(room: room, target: reaction.target) }
            } else {
                targets.redacted = try mapping(room: room, eventID: target)
            }
        case .member, .powerLevels, .topic, .tombstone, .encrypted, .encryptionEnabled:
            break
        }
        return targets
    }

    /// The message an XEP-0461/0444 id names: the room's stanza-id, else (liberal on input) one of our origin-ids or
    /// an id of the sender's own message.
    private func referenced(_ id: String, sender: MessageSender, in room: RoomID) throws -> MessageMapping? {
        if let stanzaID = StanzaID(id), let found = try mapping(room: room, stanzaID: stanzaID) { return found }
        if let originID = OriginID(id), let found = try mapping(room: room, originID: originID) { return found }
        return try sendersOwn(id, sender: sender, in: room)
    }

    /// The sender's own message they gave the `id` attribute (else the origin-id) `id`.
    private func sendersOwn(_ id: String, sender: MessageSender, in room: RoomID) throws -> MessageMapping? {
        if let attribute = StanzaAttributeID(id), let found = try mapping(room: room, sender: sender, xmppID: attribute) { return found }
        return try OriginID(id).flatMap { try mapping(room: room, sender: sender, originID: $0) }
    }

    /// A message row as the original it stands for: a correction → its original; reactions and retractions → nil.
    private func original(of mapping: MessageMapping?, in room: RoomID) throws -> MessageMapping? {
        guard let mapping else { return nil }
        switch mapping.kind {
        case .message: return mapping
        case .edit: return try mapping.target.flatMap { try self.mapping(room: room, eventID: $0) }
        case .reaction, .retraction: return nil
        }
    }
}
