import IsthmusCommon
import Matrix
import MessageFormatting
import XMPP

/// Replies, corrections, retractions and reactions in a hosted room. The room's stanza-ids are Matrix event ids, so
/// what names a stanza-id (replies, reactions, retractions) names the event; corrections name the original's `id`,
/// which for Matrix messages is the event id too and for an occupant's own messages is looked up in ``sentEvents``.
extension GatewayRoomMachine {
    /// What an occupant's groupchat message asks of the Matrix room.
    mutating func outgoing(_ message: Message, from: JID, ghost: UserID, room: RoomID) -> [Action] {
        let references = message.references
        if let reactions = references.reactions {
            guard let target = EventID(reactions.id) else { return [] }
            let slot = ReactionSlot(sender: ghost, target: target)
            let current = reactionKeys(of: slot)
            let wanted = Set(reactions.keys)
            var actions: [Action] = wanted.subtracting(current.keys).sorted().map {
                .sendMatrix(from: from, ghost: ghost, room: room, message: message, outgoing: .reaction(target: target, key: $0))
            }
            for key in Set(current.keys).subtracting(wanted).sorted() {
                guard let event = current[key] else { continue }
                forgetReaction(event)
                actions.append(.sendMatrix(from: from, ghost: ghost, room: room, message: message, outgoing: .redaction(event)))
            }
            return actions + reflect(message, from: from)
        }
        if let retraction = references.retraction {
            // Only the occupant's own messages (by the ids it sent, or their stanza-ids): nobody retracts another's.
            guard let target = sentEvents["\(from.bare) \(retraction.id)"] else { return [] }
            return [.sendMatrix(from: from, ghost: ghost, room: room, message: message, outgoing: .redaction(target))] + reflect(message, from: from)
        }
        guard let body = message.body, !body.isEmpty else { return [] }
        if let replaced = references.replaces {
            guard let original = sentEvents["\(from.bare) \(replaced)"] else {
                // Not a message of the occupant's this room knows (one from before a restart, or another's): as new text.
                return [.sendMatrix(from: from, ghost: ghost, room: room, message: message, outgoing: .text(body: body, replyTo: nil))]
            }
            return [.sendMatrix(from: from, ghost: ghost, room: room, message: message, outgoing: .edit(original: original, body: body))]
        }
        let replyTo = references.reply.flatMap { EventID($0.id) }
        let text = replyTo == nil ? body : references.removingReplyQuote(from: body)
        if let link = PortalStateMachine.fileLink(body: text, references: references) {
            return [.sendMatrix(from: from, ghost: ghost, room: room, message: message, outgoing: .file(link, replyTo: replyTo))]
        }
        return [.sendMatrix(from: from, ghost: ghost, room: room, message: message, outgoing: .text(body: text, replyTo: replyTo))]
    }

    /// The reaction `key` of `from`'s ghost on `target` is `event` now.
    mutating func reacted(_ from: JID, _ target: EventID, _ key: String, _ event: EventID) -> [Action] {
        guard let ghost = occupants[from.bare]?.ghost else { return [] }
        record(ReactionSlot(sender: ghost, target: target), key: key, event: event)
        return []
    }

    /// A Matrix message: new, an edit (a XEP-0308 correction of the event id) or a reply (XEP-0461 to the event id).
    func matrixMessage(_ event: MatrixRoomEvent, body: String, details: MessageDetails?) -> [Action] {
        let nick = senderNick(event.sender)
        var references = MessageReferences()
        var text = body
        if let original = details?.replaces {
            references.replaces = original.rawValue
        } else if let replyTo = details?.replyTo {
            references.reply = .init(to: nil, id: replyTo.rawValue)
            text = MatrixReplyFallback.strip(body: body, formattedBody: nil).body
        }
        // A file: its link (served by the bridge) is the body, so clients show it, with OOB and SFS; a caption follows.
        if let attachment = details?.media, details?.replaces == nil,
           let url = mediaLinks.map({ attachment.link($0, name: attachment.name(body: body)) }) {
            let nicks = memberNicks()
            let (file, caption) = attachment.xmppFile(url: url, body: body, html: details?.html, nick: { nicks[$0] })
            references.file = file
            var actions = broadcast { .message(groupchat(url, from: nick, to: $0, event: event.eventID, references: references)) }
            if let caption {
                actions += broadcast { .message(groupchat(caption, from: nick, to: $0, event: nil)) }
            }
            return actions
        }
        return broadcast { .message(groupchat(text, from: nick, to: $0, event: event.eventID, references: references)) }
    }

    /// A Matrix reaction: the sender's whole set on that message goes out (XEP-0444).
    mutating func matrixReaction(_ event: MatrixRoomEvent, target: EventID, key: String) -> [Action] {
        let slot = ReactionSlot(sender: event.sender, target: target)
        record(slot, key: key, event: event.eventID)
        return reactionSet(slot)
    }

    /// A Matrix redaction: of a reaction, the sender's smaller set; of a message, its retraction (XEP-0424, by the
    /// stanza-id and, for clients of the older version, the same id as origin-id).
    mutating func matrixRedaction(_ event: MatrixRoomEvent, target: EventID) -> [Action] {
        if let (slot, _) = reactionEvents[target] {
            forgetReaction(target)
            return reactionSet(slot)
        }
        let nick = senderNick(event.sender)
        var references = MessageReferences()
        references.retractions = [.current(id: target.rawValue), .legacy(originID: target.rawValue)]
        return broadcast { .message(groupchat(nil, from: nick, to: $0, event: nil, references: references)) }
    }

    // MARK: Helpers

    private func reactionKeys(of slot: ReactionSlot) -> [String: EventID] { reactions[slot] ?? [:] }

    private func reactionSet(_ slot: ReactionSlot) -> [Action] {
        let nick = senderNick(slot.sender)
        var references = MessageReferences()
        references.reactions = .init(id: slot.target.rawValue, keys: reactionKeys(of: slot).keys.sorted())
        return broadcast { .message(groupchat(nil, from: nick, to: $0, event: nil, references: references)) }
    }

    private mutating func record(_ slot: ReactionSlot, key: String, event: EventID) {
        // Bounded: past the limit the room forgets what it knew (a later set then names only the newer keys).
        if reactionEvents.count >= Self.maxRememberedReactions {
            reactions = [:]
            reactionEvents = [:]
        }
        reactions[slot, default: [:]][key] = event
        reactionEvents[event] = (slot, key)
    }

    private mutating func forgetReaction(_ event: EventID) {
        guard let (slot, key) = reactionEvents.removeValue(forKey: event) else { return }
        reactions[slot]?[key] = nil
        if reactions[slot]?.isEmpty == true { reactions[slot] = nil }
    }

    /// Reflects an occupant's reactions or retraction to every resource in the room as it was sent.
    private func reflect(_ message: Message, from: JID) -> [Action] {
        guard let nick = occupants[from.bare]?.nick else { return [] }
        return broadcast { resource in
            var reflected = Message(type: .groupchat, from: address.occupant(nick), to: resource, id: message.id, originID: message.originID,
                                    extensions: message.extensions)
            reflected.body = message.body
            return .message(reflected)
        }
    }

    mutating func remember(_ sender: JID, id: String, event: EventID) {
        let key = "\(sender) \(id)"
        if sentEvents.updateValue(event, forKey: key) == nil { sentOrder.append(key) }
        if sentOrder.count > Self.maxRememberedMessages { sentEvents[sentOrder.removeFirst()] = nil }
    }
}
