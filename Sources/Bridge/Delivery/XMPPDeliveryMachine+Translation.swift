import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import MessageFormatting
import XMPP

/// What a Matrix message, edit, reaction or redaction becomes in the MUC: each is mapped (consuming its inbox row)
/// before its stanza leaves, with the ids the XEPs name (RICH.md A1) resolved from the message map — a reply names the
/// room's stanza-id, a correction the original's `id` attribute, a retraction both (XEP-0424 `:1` and the older `:0`
/// form), a reaction set the stanza-id.
extension XMPPDeliveryMachine {
    /// A Matrix event with what it refers to resolved.
    mutating func translate(_ queued: QueuedMatrixEvent, targets: MatrixTargets, in room: Room, now: ContinuousClock.Instant) -> [Output] {
        let event = queued.event
        switch event.content {
        case .message(let msgtype, let body, let details):
            return matrixMessage(queued, msgtype: msgtype, body: body, details: details ?? MessageDetails(), targets: targets, in: room)
        case .reaction(_, let key):
            return matrixReaction(queued, key: key, targets: targets, in: room, now: now)
        case .redaction(_, let reason):
            return matrixRedaction(queued, reason: reason, targets: targets, in: room)
        case .member, .powerLevels, .topic, .tombstone, .encrypted, .encryptionEnabled:
            return [.perform(.dequeue(seq: queued.seq))]
        }
    }

    private func matrixMessage(_ queued: QueuedMatrixEvent, msgtype: MessageType, body: String, details: MessageDetails,
                               targets: MatrixTargets, in room: Room) -> [Output] {
        let event = queued.event
        if let attachment = details.media, details.replaces == nil,
           var media = mediaStanza(attachment, body: body, html: details.html, uploadedURL: targets.uploadedURL, in: room) {
            if let relay = configuration.relay {
                // The file's body must be its URL alone (XEP-0066); who sent it is said by the caption behind it.
                media.stanza.caption = relay.render(name: room.relayName(event.sender), text: media.stanza.caption ?? attachment.name(body: body))
            }
            return mapAndSend(queued, user: event.sender, stanza: media.stanza, kind: .message, target: nil, excerpt: media.excerpt, in: room)
        }
        guard let translated = RichTranslation.toXMPP(msgtype: msgtype, body: body, html: details.html, nick: room.mucNick) else {
            return [.perform(.dequeue(seq: queued.seq))]
        }
        var references = MessageReferences(unstyled: translated.unstyled)
        // Client mode: the relay occupant says who wrote it, in the operator's format.
        var text = configuration.relay?.render(name: room.relayName(event.sender), text: translated.body) ?? translated.body
        var kind = MessageMapping.Kind.message
        var target: EventID?
        if let original = details.replaces {
            // XEP-0308: only the author's own message, named by the `id` we gave it (our origin-id), always the original.
            guard let mapped = targets.original, mapped.direction == .matrixToXMPP, mapped.sender == .matrix(event.sender),
                  mapped.kind == .message, let id = mapped.xmppID ?? mapped.originID.flatMap({ StanzaAttributeID($0.rawValue) }) else {
                return skipped(queued, "edit of a message that is not the sender's bridged message")
            }
            references.replaces = id.rawValue
            kind = .edit
            target = original
        } else if details.replyTo != nil, let replied = targets.reply, replied.kind == .message, !translated.body.hasPrefix("/me ") {
            // XEP-0461 names the room's stanza-id and the author's occupant; the quote (XEP-0428 fallback) is for
            // clients without replies and holds a nick and plain text only — never a Matrix id. A relayed message's
            // occupant is the relay; its quote names the Matrix user who wrote it.
            let nick = replied.sender.matrixUser.flatMap(room.puppetNick) ?? replied.nick ?? "…"
            if let stanzaID = replied.stanzaID {
                references.reply = .init(to: configuration.muc.with(resource: nick), id: stanzaID.rawValue)
            }
            let quoted = configuration.relay == nil ? nil : replied.sender.matrixUser.map(room.relayName)
            text = references.quoting(text, nick: quoted ?? nick, excerpt: replied.excerpt ?? "")
        }
        return mapAndSend(queued, user: event.sender, stanza: OutgoingGroupchat(body: text, references: references), kind: kind,
                          target: target, excerpt: RichTranslation.excerpt(translated.body), in: room)
    }

    /// `m.reaction` → the user's whole set for the message (XEP-0444), with `<store/>` so the room archives it. In
    /// client mode the one relay occupant reacts for every Matrix user: its set is the union of their keys.
    private mutating func matrixReaction(_ queued: QueuedMatrixEvent, key: String, targets: MatrixTargets, in room: Room,
                                         now: ContinuousClock.Instant) -> [Output] {
        let user = queued.event.sender
        guard let reacted = targets.reacted, reacted.kind == .message, let event = reacted.eventID else {
            return skipped(queued, "reaction to a message that was not bridged")
        }
        guard let stanzaID = reacted.stanzaID else {
            if reacted.direction == .matrixToXMPP, reacted.state == .sending, let originID = reacted.originID {
                return waitForReceipt(of: originID, queued, now: now)
            }
            return skipped(queued, "reaction to a message the room gave no stanza-id (XEP-0444 cannot name it)")
        }
        endReceiptWait(for: queued.event.eventID)
        guard !targets.reactions.contains(where: { $0.key == key }) else { return [.perform(.dequeue(seq: queued.seq))] }
        let added = Reaction(room: configuration.room, target: event, reactor: .matrix(user), key: key, eventID: queued.event.eventID)
        let keys = configuration.relay == nil ? targets.reactions.map(\.key) + [key] : Self.relaySet(targets.relayedReactions + [added])
        let change = ReactionChange(added: [added])
        return mapAndSend(queued, user: user, stanza: OutgoingGroupchat.reactions(to: stanzaID.rawValue, keys), kind: .reaction, target: event,
                          reaction: change, in: room)
    }

    /// A redaction: of a reaction → the reactor's reduced set; of a Matrix user's message → a XEP-0424 retraction from
    /// their puppet; of an XMPP user's message → the bridge cannot remove it there (its puppets are not moderators):
    /// the room is told.
    private func matrixRedaction(_ queued: QueuedMatrixEvent, reason: String?, targets: MatrixTargets, in room: Room) -> [Output] {
        if let reaction = targets.redactedReaction {
            guard let reactor = reaction.reactor.matrixUser, let reacted = targets.reacted, let stanzaID = reacted.stanzaID else {
                return skipped(queued, "redaction of a reaction that was not bridged")
            }
            let keys = configuration.relay == nil ? targets.reactions.map(\.key).filter { $0 != reaction.key }
                : Self.relaySet(targets.relayedReactions.filter { $0.reactor != reaction.reactor || $0.key != reaction.key })
            return mapAndSend(queued, user: reactor, stanza: OutgoingGroupchat.reactions(to: stanzaID.rawValue, keys), kind: .reaction,
                              target: reaction.target, reaction: ReactionChange(removed: [reaction]), in: room)
        }
        guard let redacted = targets.redacted, redacted.kind == .message, let target = redacted.eventID else {
            return skipped(queued, "redaction of nothing the bridge sent")
        }
        switch redacted.direction {
        case .matrixToXMPP:
            guard let author = redacted.sender.matrixUser, let originID = redacted.originID else {
                return skipped(queued, "redaction of a message without ids")
            }
            return mapAndSend(queued, user: author, stanza: .retraction(id: redacted.stanzaID?.rawValue ?? originID.rawValue, originID: originID),
                              kind: .retraction, target: target, in: room)
        case .xmppToMatrix:
            // XEP-0425, in the version the room speaks, from the moderator's puppet (the room checks its role).
            let user = queued.event.sender
            guard let version = room.moderation, let stanzaID = redacted.stanzaID, let occupant = room.joinedPuppet(user) else {
                let why = room.moderation == nil ? "the XMPP room does not support moderation" : "the message cannot be named in the XMPP room"
                return notModerated(queued, why, in: room)
            }
            return [.perform(.moderate(ModerationJob(user: user, occupant: occupant,
                                                     request: ModerationRequest(stanzaID: stanzaID.rawValue, reason: reason, version: version),
                                                     seq: queued.seq, eventID: queued.event.eventID)))]
        }
    }

    func moderated(_ job: ModerationJob, failure: XMPPFailure?, in room: Room) -> [Output] {
        guard let failure else {
            return [.perform(.log(LogEntry(level: .info, message: "A Matrix moderator's redaction was applied in the MUC",
                                           metadata: ["matrix.event.id": job.eventID.rawValue]))),
                    .perform(.dequeue(seq: job.seq))]
        }
        if failure.isUnavailable { return [.portal(.xmppUnavailable(failure))] }
        let why: String = if case .refused(let error) = failure, error.condition == .forbidden {
            "their XMPP occupant is not a moderator there"
        } else {
            failure.description
        }
        return notModerated(QueuedMatrixEvent(seq: job.seq, event: MatrixRoomEvent(eventID: job.eventID, room: configuration.room,
                                                                                  sender: job.user, content: .redaction(target: job.eventID, reason: nil))),
                            why, in: room)
    }

    /// A Matrix redaction of an XMPP user's message that could not be applied in the MUC: the room is told.
    private func notModerated(_ queued: QueuedMatrixEvent, _ why: String, in room: Room) -> [Output] {
        let who = room.name(queued.event.sender)
        return [.perform(.log(LogEntry(level: .info, message: "A Matrix redaction of an XMPP user's message stays on Matrix",
                                       metadata: ["matrix.event.id": queued.event.eventID.rawValue, "reason": why]))),
                .perform(.postNotice("⚠️ \(who) removed a message of an XMPP user here, but it stays in the XMPP room: \(why).",
                                     subject: "redaction:\(queued.event.eventID.rawValue)")),
                .perform(.dequeue(seq: queued.seq))]
    }

    /// The relay occupant's XEP-0444 set: every key some Matrix user reacted with, each once, in the order first used.
    /// A key two users chose stays until both took it back.
    static func relaySet(_ reactions: [Reaction]) -> [String] {
        var seen = Set<String>()
        return reactions.map(\.key).filter { seen.insert($0).inserted }
    }

    /// Maps the event (consuming its inbox row, with its reaction change) before the stanza goes out from `user`'s puppet
    /// (client mode: from the relay occupant).
    private func mapAndSend(_ queued: QueuedMatrixEvent, user: UserID, stanza: OutgoingGroupchat, kind: MessageMapping.Kind,
                            target: EventID?, excerpt: String? = nil, reaction: ReactionChange? = nil, in room: Room) -> [Output] {
        let event = queued.event
        let originID = configuration.naming.originID(for: event.eventID)
        let mapping = MessageMapping(
            room: configuration.room, eventID: event.eventID, stanzaID: nil, originID: originID, direction: .matrixToXMPP,
            sender: .matrix(user), state: .sending, body: stanza.body, kind: kind, xmppID: StanzaAttributeID(originID.rawValue),
            nick: configuration.relay == nil ? room.puppetNick(user) : configuration.naming.botNick, target: target, excerpt: excerpt, payload: stanza.payload)
        return [.perform(.insertMapping(mapping, consumingInbox: queued.seq,
                                        delivery: XMPPDelivery(user: user, originID: originID, stanza: stanza, purpose: .inbox(seq: queued.seq)),
                                        reaction: reaction))]
    }

    /// An event that refers to nothing the bridge can act on: logged, and its inbox row removed.
    func skipped(_ queued: QueuedMatrixEvent, _ reason: String) -> [Output] {
        [.perform(.log(LogEntry(level: .info, message: "Matrix event not bridged",
                                metadata: ["matrix.event.id": queued.event.eventID.rawValue, "reason": reason]))),
         .perform(.dequeue(seq: queued.seq))]
    }
}
