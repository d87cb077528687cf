import IsthmusCommon
import IsthmusStore
import Media
import XMPP

/// The decisions of the DM path (MUC private messages ↔ Matrix DM rooms, RICH.md §12), as pure functions: what a
/// Matrix event becomes, asked by ``DirectChatMachine``, and what a private message becomes, asked by the
/// ``DirectChats`` actor.
enum DirectChatRules {
    /// A MUC private message to a Matrix user's occupant, on its way to their DM.
    struct Inbound: Sendable, Equatable {
        /// The Matrix user whose occupant was addressed.
        var user: UserID
        /// The sender's ghost (one per XMPP identity, the same as in the linked room) and that identity.
        var ghost: UserID
        var identity: String
        /// The message, its sender as the room knows them (real JID, occupant-id: the message map scopes the ids
        /// the sender chose by them), with what it refers to (a correction, retraction or reactions).
        var message: RoomMessage
        /// The file the message shares (OOB, SFS, or a bare link as the whole body), fetched and uploaded when media
        /// is bridged; the text is then its fallback.
        var file: XMPPFileLink? = nil

        /// The sender's nick (for logs and notices only).
        var nick: String { message.nick }
        /// The stanza's `id` (or origin-id): the Matrix txnIds are derived from it. nil: the PM carries none.
        var stanzaID: String? { message.id?.rawValue ?? message.originID?.rawValue }
    }

    /// What a private message does in its DM room (`room`), given what it refers to there; `txnID` makes a call's
    /// transaction id from the stanza's and what the call is for.
    /// Mirrors the linked room's rules (``MatrixDeliveryMachine/deliver(_:targets:in:)``): only the author's own
    /// message can be corrected or retracted; a reaction set replaces the sender's earlier one.
    static func plan(_ inbound: Inbound, in room: RoomID, targets: PortalStateMachine.XMPPTargets,
                     txnID: (String?) -> ClientTransactionID) -> InboundPlan {
        let message = inbound.message
        let references = message.references
        let sender = MessageSender.occupant(PortalStateMachine.occupantIdentity(message))
        var record = MessageMapping(room: room, eventID: nil, stanzaID: nil, originID: message.originID, direction: .xmppToMatrix,
                                    sender: sender, state: .delivered, xmppID: message.id, nick: message.nick)
        if references.retraction != nil {
            guard let target = targets.retracted, target.sender == sender, let event = target.eventID else {
                return .ignore("retraction of a message that is not the sender's bridged message")
            }
            record.kind = .retraction
            record.target = event
            return InboundPlan.send([.redaction(event, reason: nil, txnID: txnID(nil))], record)
        }
        if let reactions = references.reactions {
            guard let target = targets.reacted, let event = target.eventID else { return .ignore("reactions to a message that was not bridged") }
            record.kind = .reaction
            record.target = event
            let (sends, change) = PortalStateMachine.reactionUpdate(to: reactions.keys, current: targets.reactions, on: event, in: room,
                                                                    by: sender) { txnID($0) }
            return .send(sends, record, reactions: change)
        }
        guard let body = message.body else { return .ignore("nothing to bridge") }
        let replied = references.reply != nil ? targets.reply?.eventID : nil
        // XEP-0461 + XEP-0428: the quote is for clients without replies; Matrix shows the reply itself.
        let text = replied != nil ? references.removingReplyQuote(from: body) : body
        // Pills: none (a DM has no room of nicks they could name).
        var outgoing = RichTranslation.toMatrix(text, unstyled: references.unstyled, nicks: [:])
        record.excerpt = RichTranslation.excerpt(outgoing.body)
        if references.replaces != nil, let original = targets.original, original.sender == sender, let event = original.eventID {
            record.kind = .edit
            record.target = event
            return .send([.message(outgoing.replacing(event), txnID: txnID(nil))], record)
        }
        if let link = inbound.file { return .send([.media(link, fallback: outgoing, txnID: txnID(nil))], record) }
        if let replied { outgoing.relatesTo = .reply(to: replied) }
        return .send([.message(outgoing, txnID: txnID(nil))], record)
    }

    /// What ``plan(_:in:targets:txnID:)`` decided.
    enum InboundPlan: Sendable, Equatable {
        /// Make these calls as the ghost, then record the message (with the event id of the first call; for reactions,
        /// each added reaction gets its call's) and the reaction change.
        case send([PortalStateMachine.MatrixSend], MessageMapping, reactions: ReactionChange = ReactionChange())
        /// Nothing to send, for this reason (logged).
        case ignore(String)
    }

    /// What to do with an event of a DM room.
    enum MatrixStep: Sendable, Equatable {
        /// Send a private message from the Matrix user's occupant to `to` (`room@service/nick`).
        case sendPrivate(to: JID, PrivateSend)
        /// Send a file as a private message to `to`: the body is the file's URL alone (as in the room, so XMPP clients
        /// show the attachment), with OOB/SFS `file`; a `caption` follows as a second message.
        case sendFile(to: JID, file: SharedFile, caption: String?)
        /// Tell the Matrix user something, as the ghost, with an `m.notice`.
        case notice(String)
        /// The Matrix user left (or was removed from) the DM room: forget it; the next PM creates a new one.
        case forgetRoom
        /// The Matrix user invited the ghost into this room (a DM they started): the ghost joins.
        case acceptInvite
        /// The Matrix user's event cannot be read (end-to-end encrypted) or turned encryption on: the DM is told
        /// (``EncryptedEventNotices``).
        case encrypted
        /// Nothing to bridge (the ghost's own events, an invite, a join, an edit of a message that was not bridged…).
        case ignore
    }

    /// A private message the Matrix user's event becomes, and how it is mapped once sent.
    struct PrivateSend: Sendable, Equatable {
        var stanza: OutgoingGroupchat
        var kind: MessageMapping.Kind = .message
        /// For an edit, reaction or retraction: the Matrix event of the message it refers to.
        var target: EventID? = nil
        /// The reactions table's change a reaction set makes.
        var reaction: ReactionChange? = nil
        /// The start of a message's plain text as sent (for the quote of a reply to it; never the Matrix body, whose
        /// reply fallback may hold Matrix ids).
        var excerpt: String? = nil
    }

    /// The decision for one event of `chat`'s DM room. `occupant`: the ghost's current state in the linked room (its
    /// nick, and whether its occupant is still in the MUC); nil when the bridge never saw it there. `targets`: what
    /// the DM's message map holds about the messages the event refers to. `mediaLinks`: the bridge's signer of file
    /// links (nil: media is not served, so a file cannot go).
    ///
    /// The ids named are those of the private messages (RICH.md A1; a private message has no stanza-id): a correction
    /// names the original's `id`, a retraction and a reaction set the `id` too (ours is also the origin-id).
    static func step(for event: MatrixRoomEvent, chat: DirectChat, occupant: RoomGhost?,
                     targets: PortalStateMachine.MatrixTargets = PortalStateMachine.MatrixTargets(), userNick: String? = nil,
                     mediaLinks: MediaLinkSigner? = nil) -> MatrixStep {
        if case .member(let membership, _, _) = event.content {
            if membership == .invite, event.stateKey == chat.ghost.rawValue, event.sender == chat.matrixUser { return .acceptInvite }
            guard event.stateKey == chat.matrixUser.rawValue else { return .ignore }
            return membership == .leave || membership == .ban ? .forgetRoom : .ignore
        }
        guard event.sender == chat.matrixUser else { return .ignore }
        switch event.content {
        case .encrypted, .encryptionEnabled: return .encrypted
        default: break
        }
        let outgoing = outgoing(for: event, muc: chat.muc, targets: targets, userNick: userNick, mediaLinks: mediaLinks)
        switch outgoing {
        case .ignore, .notice: return outgoing.step(to: nil)
        case .send, .file: break
        }
        guard let occupant, occupant.joined, let to = chat.muc.bare.with(resource: occupant.nick) else {
            let name = occupant?.nick ?? "This XMPP user"
            return .notice("⚠️ \(name) is not in the XMPP room any more; the message was not delivered.")
        }
        return outgoing.step(to: to)
    }

    /// What the Matrix user's event becomes, before it is known where it goes.
    private enum Outgoing {
        case send(PrivateSend)
        case file(SharedFile, caption: String?)
        case notice(String)
        case ignore

        func step(to: JID?) -> MatrixStep {
            switch self {
            case .send(let send): to.map { .sendPrivate(to: $0, send) } ?? .ignore
            case .file(let file, let caption): to.map { .sendFile(to: $0, file: file, caption: caption) } ?? .ignore
            case .notice(let text): .notice(text)
            case .ignore: .ignore
            }
        }
    }

    private static func outgoing(for event: MatrixRoomEvent, muc: JID, targets: PortalStateMachine.MatrixTargets, userNick: String?,
                                 mediaLinks: MediaLinkSigner?) -> Outgoing {
        let user = event.sender
        switch event.content {
        case .message(let msgtype, let body, let details):
            if let replaced = details?.replaces {
                // XEP-0308: only the user's own message, named by the `id` it went with, always the original.
                guard let original = targets.original, original.direction == .matrixToXMPP, original.sender == .matrix(user),
                      original.kind == .message, let id = privateID(of: original),
                      let text = RichTranslation.toXMPP(msgtype: msgtype, body: body, html: details?.html, nick: { _ in nil }) else { return .ignore }
                return .send(PrivateSend(stanza: OutgoingGroupchat(body: text.body, references: MessageReferences(replaces: id, unstyled: text.unstyled)),
                                         kind: .edit, target: replaced))
            }
            if let media = details?.media {
                // A file that cannot go as a link (no media links served) is not sent as its bare file name.
                guard let file = fileMessage(media, body: body, html: details?.html, links: mediaLinks) else {
                    return .notice("⚠️ Only text and files are bridged to XMPP private messages; this message was not delivered.")
                }
                return .file(file.file, caption: file.caption)
            }
            // Pills become plain names in a DM (there is no room whose nicks they could name).
            guard let text = RichTranslation.toXMPP(msgtype: msgtype, body: body, html: details?.html, nick: { _ in nil }) else {
                return .notice("⚠️ Only text and files are bridged to XMPP private messages; this message was not delivered.")
            }
            var references = MessageReferences(unstyled: text.unstyled)
            var body = text.body
            if details?.replyTo != nil, let replied = targets.reply, replied.kind == .message, !body.hasPrefix("/me "),
               let id = privateID(of: replied) {
                // XEP-0461 names the private message's id and its author's occupant; the quote (XEP-0428 fallback,
                // for clients without replies) holds a nick and plain text only — never a Matrix id.
                let nick = replied.direction == .xmppToMatrix ? replied.nick : userNick
                references.reply = .init(to: nick.flatMap { muc.bare.with(resource: $0) }, id: id)
                body = references.quoting(body, nick: nick ?? "", excerpt: replied.excerpt ?? "")
            }
            return .send(PrivateSend(stanza: OutgoingGroupchat(body: body, references: references), excerpt: RichTranslation.excerpt(text.body)))
        case .reaction(_, let key):
            // XEP-0444: the user's whole set for the message.
            guard let reacted = targets.reacted, reacted.kind == .message, let target = reacted.eventID, let id = privateID(of: reacted)
            else { return .ignore }
            var keys = targets.reactions.map(\.key)
            guard !keys.contains(key) else { return .ignore }
            keys.append(key)
            let added = Reaction(room: event.room, target: target, reactor: .matrix(user), key: key, eventID: event.eventID)
            return .send(PrivateSend(stanza: .reactions(to: id, keys), kind: .reaction, target: target, reaction: ReactionChange(added: [added])))
        case .redaction:
            if let reaction = targets.redactedReaction {
                // The user's set without the redacted reaction.
                guard reaction.reactor == .matrix(user), let reacted = targets.reacted, let id = privateID(of: reacted) else { return .ignore }
                let keys = targets.reactions.map(\.key).filter { $0 != reaction.key }
                return .send(PrivateSend(stanza: .reactions(to: id, keys), kind: .reaction, target: reaction.target,
                                         reaction: ReactionChange(removed: [reaction])))
            }
            // XEP-0424: only the user's own message. An XMPP user's private message cannot be removed for them
            // (the DM's creator gives both power to redact): the user hears that it stays there.
            guard let redacted = targets.redacted, redacted.kind == .message else { return .ignore }
            guard redacted.direction == .matrixToXMPP else { return .notice(Self.notRetractedNotice) }
            guard redacted.sender == .matrix(user), let originID = redacted.originID, let target = redacted.eventID else { return .ignore }
            return .send(PrivateSend(stanza: .retraction(id: originID.rawValue, originID: originID), kind: .retraction, target: target))
        case .member, .powerLevels, .topic, .tombstone, .encrypted, .encryptionEnabled:
            return .ignore
        }
    }

    static let notRetractedNotice = "⚠️ The message was removed here only: on XMPP, only its author can retract it."

    /// The id a private message is named by: the `id` it carried (ours: its origin-id).
    static func privateID(of mapping: MessageMapping) -> String? {
        mapping.xmppID?.rawValue ?? mapping.originID?.rawValue
    }

    /// A Matrix file as the bridge's signed link (``MediaProxy`` serves it) and its caption (pills become plain names,
    /// as in text); nil when no link can be made.
    static func fileMessage(_ attachment: MatrixAttachment, body: String, html: String?,
                            links: MediaLinkSigner?) -> (file: SharedFile, caption: String?)? {
        guard let links else { return nil }
        let url = attachment.link(links, name: attachment.name(body: body))
        return attachment.xmppFile(url: url, body: body, html: html, nick: { _ in nil })
    }

    /// What a Matrix user's invitation of a ghost into a room the bridge does not know becomes.
    enum InviteDecision: Sendable, Equatable {
        /// A DM through `place`: the user's occupant sends the private messages there, to the ghost's occupant.
        case open(SharedRoom)
        /// The ghost declines, saying why.
        case refuse(reason: String)
        /// Not a direct chat: left alone. A room upgrade's invitations (Element invites every member of the old room)
        /// are of this kind, and the portal brings its ghosts into a linked room itself.
        case ignore
    }

    static let nothingSharedReason = "You are not in a bridged room with this XMPP user; private messages go through a room you share."
    static let unencryptedReason = "This bridge only bridges encrypted chats: start an encrypted direct chat."

    /// A DM a Matrix user starts by inviting a ghost (RICH.md §12, "Matrix-initiated"): it must be a direct chat
    /// (`is_direct`; other invitations are left alone), and runs through a linked room where both have an occupant: preferably one where both are in the
    /// MUC now (a private message reaches only a present occupant), then one where the ghost's occupant is, then the
    /// first they share (where the DM then says why a message was not delivered). With `encryption.require`
    /// (`requireEncrypted`), an invitation into a room that is not encrypted (as its invite state says) is declined.
    static func decide(isDirect: Bool?, shared: [SharedRoom], encrypted: Bool? = nil, requireEncrypted: Bool = false) -> InviteDecision {
        guard isDirect == true else { return .ignore }
        if requireEncrypted && encrypted != true { return .refuse(reason: unencryptedReason) }
        let place = shared.first { $0.ghostJoined && $0.userJoined } ?? shared.first { $0.ghostJoined } ?? shared.first
        guard let place else { return .refuse(reason: nothingSharedReason) }
        return .open(place)
    }

    /// The notice for a private message the MUC bounced (e.g. `item-not-found`: the recipient left).
    static func bounceNotice(nick: String, error: StanzaErrorInfo) -> String {
        let reason = error.text.map { "\(error.condition.rawValue): \($0)" } ?? error.condition.rawValue
        return "⚠️ Your message could not be delivered to \(nick) (\(reason))."
    }
}
