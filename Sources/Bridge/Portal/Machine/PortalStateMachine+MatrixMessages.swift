import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import MessageFormatting
import XMPP

/// Matrix messages, edits, reactions and redactions to the MUC, from their senders' puppets, exactly once: each is
/// mapped (consuming its inbox row) before its stanza leaves, with the ids the XEPs name (RICH.md A1) resolved from
/// the message map — a reply names the room's stanza-id, a correction the original's `id` attribute, a retraction
/// both (XEP-0424 `:1` and the older `:0` form), a reaction set the stanza-id.
extension PortalStateMachine {
    /// A Matrix event with what it refers to resolved; nil targets: the store could not be read (try again later).
    mutating func matrixEvent(_ queued: QueuedMatrixEvent, targets: MatrixTargets?) -> [Action] {
        guard let targets else { return drainBlocked(retry: true) }
        let event = queued.event
        switch event.content {
        case .message(let msgtype, let body, let details):
            return matrixMessage(queued, msgtype: msgtype, body: body, details: details ?? MessageDetails(), targets: targets)
        case .reaction(_, let key):
            return matrixReaction(queued, key: key, targets: targets)
        case .redaction(_, let reason):
            return matrixRedaction(queued, reason: reason, targets: targets)
        case .member, .powerLevels, .topic, .tombstone, .encrypted, .encryptionEnabled:
            return [.dequeue(seq: queued.seq)]
        }
    }

    /// The MUC nick a Matrix user is known by in the room: an XMPP user's ghost → that occupant's nick; a Matrix
    /// user → their puppet's nick. nil: not in the room (a pill then keeps its own text).
    func mucNick(of user: UserID) -> String? {
        if let ghost = ghosts[user], ghost.joined { return ghost.nick }
        return puppets[user]?.nick
    }

    private mutating func matrixMessage(_ queued: QueuedMatrixEvent, msgtype: MessageType, body: String, details: MessageDetails,
                                        targets: MatrixTargets) -> [Action] {
        let event = queued.event
        if let attachment = details.media, details.replaces == nil,
           let media = mediaStanza(attachment, body: body, html: details.html, uploadedURL: targets.uploadedURL) {
            return mapAndSend(queued, user: event.sender, stanza: media.stanza, kind: .message, target: nil, excerpt: media.excerpt)
        }
        guard let translated = RichTranslation.toXMPP(msgtype: msgtype, body: body, html: details.html, nick: { mucNick(of: $0) }) else {
            return [.dequeue(seq: queued.seq)]
        }
        var references = MessageReferences(unstyled: translated.unstyled)
        var text = translated.body
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
        } else if details.replyTo != nil, let replied = targets.reply, replied.kind == .message, !text.hasPrefix("/me ") {
            // XEP-0461 names the room's stanza-id and the author's occupant; the quote (XEP-0428 fallback) is for
            // clients without replies and holds a nick and plain text only — never a Matrix id.
            let nick = replied.sender.matrixUser.flatMap { puppets[$0]?.nick } ?? replied.nick ?? "…"
            if let stanzaID = replied.stanzaID {
                references.reply = .init(to: configuration.muc.with(resource: nick), id: stanzaID.rawValue)
            }
            text = references.quoting(text, nick: nick, excerpt: replied.excerpt ?? "")
        }
        return mapAndSend(queued, user: event.sender, stanza: OutgoingGroupchat(body: text, references: references), kind: kind,
                          target: target, excerpt: RichTranslation.excerpt(translated.body))
    }

    /// `m.reaction` → the user's whole set for the message (XEP-0444), with `<store/>` so the room archives it.
    private mutating func matrixReaction(_ queued: QueuedMatrixEvent, key: String, targets: MatrixTargets) -> [Action] {
        let user = queued.event.sender
        guard let reacted = targets.reacted, reacted.kind == .message, let event = reacted.eventID else {
            return skipped(queued, "reaction to a message that was not bridged")
        }
        guard let stanzaID = reacted.stanzaID else {
            if reacted.direction == .matrixToXMPP, reacted.state == .sending, let originID = reacted.originID {
                return waitForReceipt(of: originID, queued)
            }
            return skipped(queued, "reaction to a message the room gave no stanza-id (XEP-0444 cannot name it)")
        }
        if receiptWait?.eventID == queued.event.eventID { receiptWait = nil }
        var keys = targets.reactions.map(\.key)
        guard !keys.contains(key) else { return [.dequeue(seq: queued.seq)] }
        keys.append(key)
        let change = ReactionChange(added: [Reaction(room: configuration.room, target: event, reactor: .matrix(user), key: key,
                                                     eventID: queued.event.eventID)])
        return mapAndSend(queued, user: user, stanza: OutgoingGroupchat.reactions(to: stanzaID.rawValue, keys), kind: .reaction, target: event, reaction: change)
    }

    /// A redaction: of a reaction → the reactor's reduced set; of a Matrix user's message → a XEP-0424 retraction from
    /// their puppet; of an XMPP user's message → the bridge cannot remove it there (its puppets are not moderators):
    /// the room is told.
    private mutating func matrixRedaction(_ queued: QueuedMatrixEvent, reason: String?, targets: MatrixTargets) -> [Action] {
        if let reaction = targets.redactedReaction {
            guard let reactor = reaction.reactor.matrixUser, let reacted = targets.reacted, let stanzaID = reacted.stanzaID else {
                return skipped(queued, "redaction of a reaction that was not bridged")
            }
            let keys = targets.reactions.map(\.key).filter { $0 != reaction.key }
            return mapAndSend(queued, user: reactor, stanza: OutgoingGroupchat.reactions(to: stanzaID.rawValue, keys), kind: .reaction,
                              target: reaction.target, reaction: ReactionChange(removed: [reaction]))
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
                              kind: .retraction, target: target)
        case .xmppToMatrix:
            // XEP-0425, in the version the room speaks, from the moderator's puppet (the room checks its role).
            let user = queued.event.sender
            guard let version = roomFeatures?.moderation, let stanzaID = redacted.stanzaID, let puppet = puppets[user], puppet.joined else {
                let why = roomFeatures?.moderation == nil ? "the XMPP room does not support moderation" : "the message cannot be named in the XMPP room"
                return notModerated(queued, why)
            }
            return [.moderate(ModerationJob(user: user, occupant: puppet.occupant,
                                            request: ModerationRequest(stanzaID: stanzaID.rawValue, reason: reason, version: version),
                                            seq: queued.seq, eventID: queued.event.eventID))]
        }
    }

    mutating func moderated(_ job: ModerationJob, failure: XMPPFailure?) -> [Action] {
        guard let failure else {
            return [.log(LogEntry(level: .info, message: "A Matrix moderator's redaction was applied in the MUC",
                                  metadata: ["matrix.event.id": job.eventID.rawValue])),
                    .dequeue(seq: job.seq)]
        }
        if failure.isUnavailable { return unavailableDuringDrain(failure) }
        let why: String = if case .refused(let error) = failure, error.condition == .forbidden {
            "their XMPP occupant is not a moderator there"
        } else {
            failure.description
        }
        return notModerated(QueuedMatrixEvent(seq: job.seq, event: MatrixRoomEvent(eventID: job.eventID, room: configuration.room,
                                                                                  sender: job.user, content: .redaction(target: job.eventID, reason: nil))),
                            why)
    }

    /// A Matrix redaction of an XMPP user's message that could not be applied in the MUC: the room is told.
    private func notModerated(_ queued: QueuedMatrixEvent, _ why: String) -> [Action] {
        let who = displaynames[queued.event.sender] ?? queued.event.sender.localpart
        return [.log(LogEntry(level: .info, message: "A Matrix redaction of an XMPP user's message stays on Matrix",
                              metadata: ["matrix.event.id": queued.event.eventID.rawValue, "reason": why])),
                .postNotice("⚠️ \(who) removed a message of an XMPP user here, but it stays in the XMPP room: \(why).",
                            subject: "redaction:\(queued.event.eventID.rawValue)"),
                .dequeue(seq: queued.seq)]
    }

    /// How long a Matrix event waits for the MUC to reflect the message it refers to.
    static let receiptWaitLimit: Duration = .seconds(10)

    /// The event refers to one of our messages the MUC has not reflected yet, so it has no stanza-id to name it
    /// (a reaction right after the message): the drain pauses — the event stays first in the inbox — until that
    /// reflection arrives or ``receiptWaitLimit`` passes; then the event is skipped (logged).
    private mutating func waitForReceipt(of originID: OriginID, _ queued: QueuedMatrixEvent) -> [Action] {
        if let wait = receiptWait, wait.eventID == queued.event.eventID {
            guard now < wait.until else {
                receiptWait = nil
                return skipped(queued, "the message it refers to was not reflected by the MUC in time")
            }
        } else {
            receiptWait = ReceiptWait(originID: originID, eventID: queued.event.eventID, until: now + Self.receiptWaitLimit)
        }
        agenda.removeAll { step in
            switch step {
            case .handleMatrixEvent, .finishDrain: return true
            default: return false
            }
        }
        inboxNeedsReload = true
        let selfCheck = drain?.selfCheck ?? false
        drain = nil
        if selfCheck { agenda.insert(.selfPing, at: 0) }
        return [.log(LogEntry(level: .debug, message: "A Matrix event waits for the MUC to reflect the message it refers to",
                              metadata: ["matrix.event.id": queued.event.eventID.rawValue, "xmpp.origin.id": originID.rawValue])),
                .schedule(.drainResume, at: receiptWait!.until)]
    }

    /// Maps the event (consuming its inbox row, with its reaction change) before the stanza goes out from `user`'s puppet.
    func mapAndSend(_ queued: QueuedMatrixEvent, user: UserID, stanza: OutgoingGroupchat, kind: MessageMapping.Kind,
                            target: EventID?, excerpt: String? = nil, reaction: ReactionChange? = nil) -> [Action] {
        let event = queued.event
        let originID = configuration.naming.originID(for: event.eventID)
        let mapping = MessageMapping(
            room: configuration.room, eventID: event.eventID, stanzaID: nil, originID: originID, direction: .matrixToXMPP,
            sender: .matrix(user), state: .sending, body: stanza.body, kind: kind, xmppID: StanzaAttributeID(originID.rawValue),
            nick: puppets[user]?.nick, target: target, excerpt: excerpt, payload: stanza.payload)
        return [.insertMapping(mapping, consumingInbox: queued.seq,
                               delivery: XMPPDelivery(user: user, originID: originID, stanza: stanza, purpose: .inbox(seq: queued.seq)),
                               reaction: reaction)]
    }

    /// An event that refers to nothing the bridge can act on: logged, and its inbox row removed.
    private func skipped(_ queued: QueuedMatrixEvent, _ reason: String) -> [Action] {
        [.log(LogEntry(level: .info, message: "Matrix event not bridged",
                       metadata: ["matrix.event.id": queued.event.eventID.rawValue, "reason": reason])),
         .dequeue(seq: queued.seq)]
    }
}
