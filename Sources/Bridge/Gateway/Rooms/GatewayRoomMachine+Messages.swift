import FoundationEssentials
import IsthmusCommon
import Matrix
import Media
import XMPP

/// Messages and requests in a hosted room: an occupant's groupchat (sent, then reflected to everyone), its IQs
/// (self-pings, disco#info), and the Matrix room's events.
extension GatewayRoomMachine {
    mutating func xmppMessage(_ message: Message) -> [Action] {
        guard let from = message.from else { return [] }
        guard message.type == .groupchat else {
            // An error from an occupant's resource: what we sent it bounced, it is gone.
            return message.type == .error ? leave(from, bounced: true) : privateMessage(message, from: from)
        }
        guard let occupant = occupants[from.bare], occupant.resources.contains(from), let matrixRoom else {
            return [.send(.message(errorReply(to: message, from: from, StanzaError(type: .modify, condition: .notAcceptable,
                                                                                   text: "Join the room first"))))]
        }
        return signals(message, ghost: occupant.ghost, room: matrixRoom) + outgoing(message, from: from, ghost: occupant.ghost, room: matrixRoom)
    }

    mutating func sent(_ from: JID, _ message: Message, _ event: EventID) -> [Action] {
        guard let occupant = occupants[from.bare], let body = message.body else { return [] }
        if message.references.replaces == nil {
            // Its ids, and its stanza-id (the event id), by which the occupant may correct or retract it.
            for id in [message.id?.rawValue, message.originID?.rawValue, event.rawValue].compactMap({ $0 }) {
                remember(from.bare, id: id, event: event)
            }
        }
        // Every resource of every occupant gets it, the sender's own as its reflection (with the ids it sent).
        var actions: [Action] = []
        for other in occupants.values {
            for resource in other.resources {
                var reflected = groupchat(body, from: occupant.nick, to: resource, event: event)
                reflected.id = message.id
                reflected.originID = message.originID
                reflected.extensions = message.extensions
                actions.append(.send(.message(reflected)))
            }
        }
        return actions
    }

    func xmppIQ(_ iq: IQ) -> [Action] {
        guard iq.isRequest, let from = iq.from else { return [] }
        switch (iq.type, iq.payload, iq.to?.resource) {
        case (.get, .ping?, let nick?):
            // XEP-0410: a self-ping answers whether the asker is still in under that nick.
            if let occupant = occupants[from.bare], occupant.nick == nick, occupant.resources.contains(from) { return [.send(.iq(iq.result()))] }
            return [.send(.iq(iq.errorResponse(StanzaError(type: .modify, condition: .notAcceptable))))]
        case (.get, .discoInfo?, nil):
            return [.send(.iq(iq.result(payload: .discoInfo(roomInfo))))]
        default:
            return [.send(.iq(iq.errorResponse(StanzaError(type: .cancel, condition: .serviceUnavailable))))]
        }
    }

    /// disco#info of the room (XEP-0045 §6.4).
    var roomInfo: DiscoInfo {
        DiscoInfo(identities: [.init(category: "conference", type: "text", name: address.alias.rawValue)],
                  features: [XMPPNamespace.discoInfo, XMPPNamespace.muc, XMPPNamespace.stanzaID, XMPPNamespace.mam,
                             XMPPNamespace.mam + "#extended", "muc_public", "muc_open",
                             "muc_semianonymous", "muc_persistent", "muc_unmoderated", "muc_unsecured"])
    }


    // MARK: Matrix


    mutating func matrix(_ event: MatrixRoomEvent) -> [Action] {
        guard event.room == matrixRoom else { return [] }
        let ours = Set(occupants.values.map(\.ghost)).union(pendingGhosts).union([bot])
        switch event.content {
        case .message(let msgtype, let body, let details):
            // Our occupants' own messages were reflected when the homeserver took them.
            guard !ours.contains(event.sender) else { return [] }
            return matrixMessage(event, body: msgtype == .emote ? "/me " + body : body, details: details)
        case .reaction(let target, let key):
            guard !ours.contains(event.sender) else { return [] }
            return matrixReaction(event, target: target, key: key)
        case .redaction(let target, _):
            guard !ours.contains(event.sender) else { return [] }
            return matrixRedaction(event, target: target)
        case .member(let membership, let displayname, let reason):
            guard let subject = event.stateKey.flatMap(UserID.init) else { return [] }
            if let user = occupants.first(where: { $0.value.ghost == subject })?.key {
                // Someone on Matrix removed one of our occupants: a kick (307) or a ban (301) in the MUC.
                guard event.sender != subject, membership == .leave || membership == .ban else { return [] }
                return removed(user, code: membership == .ban ? .banned : .kicked, reason: reason)
            }
            guard !ours.contains(subject) else { return [] }
            let before = nicks[subject]
            if membership == .join {
                let renamed = members[subject].map { $0 != displayname } ?? true
                members[subject] = displayname
                if renamed {
                    nicks[subject] = nil
                    assignNick(subject)
                }
            } else {
                members[subject] = nil
                nicks[subject] = nil
            }
            let after = nicks[subject]
            guard before != after else { return [] }
            var actions: [Action] = []
            if let before { actions += broadcast { .presence(occupantPresence(of: before, to: $0, available: false)) } }
            if let after { actions += broadcast { .presence(occupantPresence(of: after, to: $0)) } }
            return actions
        case .topic(let text):
            topic = text
            return broadcast { .message(Message(type: .groupchat, from: address.jid, to: $0, subject: text)) }
        case .encrypted, .encryptionEnabled:
            // Never silent: the occupants learn once that what is said here encrypted does not reach them.
            guard !toldEncrypted else { return [] }
            toldEncrypted = true
            return broadcast {
                .message(Message(type: .groupchat, from: address.jid, to: $0,
                                 body: "This room's messages are end-to-end encrypted on Matrix: this gateway cannot read them, so they do not reach XMPP."))
            }
        default:
            return []
        }
    }
}
