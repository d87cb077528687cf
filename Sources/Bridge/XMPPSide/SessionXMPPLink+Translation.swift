import FoundationEssentials
import IsthmusCommon
import XMPP

extension SessionXMPPLink {
    /// A groupchat message (or a bounced error) from a room occupant, in the bridge's terms; nil for anything else.
    /// Only a stanza-id assigned by the room itself is trusted (XEP-0359 §4: rooms strip spoofed ones).
    static func roomMessage(_ message: Message, archive: JID? = nil) -> RoomMessage? {
        guard let from = message.from else { return nil }
        let room = archive ?? from.bare
        let isError = message.type == .error
        guard message.type == .groupchat || isError else { return nil }
        let nick = from.resource ?? ""
        let stanzaID = message.stanzaIDs.first { $0.by == room }?.id
        var translated = RoomMessage(
            room: room, nick: nick, to: message.to, stanzaID: stanzaID, originID: message.originID,
            id: message.id, occupantID: message.occupantID, realJID: message.mucUser?.item?.jid?.bare,
            body: message.body, delay: message.delay?.stamp,
            error: isError ? StanzaErrorInfo(condition: message.error?.condition ?? .undefinedCondition,
                                             text: message.error?.text, retryLater: message.error?.type == .wait) : nil)
        translated.references = message.references
        translated.subject = message.subject
        translated.statusCodes = Set(message.mucUser?.statusCodes ?? [])
        translated.signals = message.signals
        return translated
    }

    /// A MUC private message (XEP-0045 §7.5: `type='chat'` from `room@service/nick`) in the bridge's terms, with what
    /// it refers to (a correction, retraction or reactions); nil when it is not from an occupant JID or has neither a
    /// body nor a reference. A stanza-id or moderation in it is dropped: a private message is not the room's.
    static func privateMessage(_ message: Message) -> RoomMessage? {
        guard message.type == .chat, let from = message.from, from.localpart != nil, let nick = from.resource else { return nil }
        var references = message.references
        references.moderation = nil
        guard message.body != nil || references.refersToAnother else { return nil }
        // No real JID from the stanza: the sender wrote its muc#user element (the room vouches for real JIDs only in
        // presence), and a claimed one would be someone else's ghost and DM.
        var translated = RoomMessage(room: from.bare, nick: nick, to: message.to, originID: message.originID, id: message.id,
                                     occupantID: message.occupantID, body: message.body)
        translated.references = references
        return translated
    }

    /// An error the room bounced for one of our private messages (its id carries ``BridgeNaming/privateOriginIDPrefix``),
    /// in the bridge's terms; nil for anything else.
    static func privateMessageError(_ message: Message) -> RoomMessage? {
        guard message.type == .error, let from = message.from, from.localpart != nil, let id = message.id,
              id.rawValue.hasPrefix(BridgeNaming.privateOriginIDPrefix) else { return nil }
        return RoomMessage(room: from.bare, nick: from.resource ?? "", to: message.to, originID: id.originID, id: id,
                           error: StanzaErrorInfo(condition: message.error?.condition ?? .undefinedCondition, text: message.error?.text))
    }

    /// An occupant's presence in a room, in the bridge's terms; nil when it is not from an occupant JID. The one
    /// exception: an available presence from the room's bare JID with a XEP-0153 hash (the room's avatar: ejabberd's
    /// and mod_vcard_muc's, XEP-0486 §3) comes with an empty nick and nothing else.
    static func roomPresence(_ presence: Presence) -> RoomPresence? {
        if let from = presence.from, from.resource == nil, from.localpart != nil, presence.type == .available,
           let avatar = AvatarUpdate(extensions: presence.extensions) {
            var translated = RoomPresence(room: from.bare, nick: "", to: presence.to, available: true)
            translated.avatar = avatar
            return translated
        }
        guard let from = presence.from, let nick = from.resource, from.localpart != nil else { return nil }
        switch presence.type {
        case .available, .unavailable, .error: break
        default: return nil
        }
        let item = presence.mucUser?.item
        var translated = RoomPresence(
            room: from.bare, nick: nick, to: presence.to, available: presence.type == .available,
            occupantID: presence.occupantID, realJID: item?.jid?.bare,
            statusCodes: Set(presence.statusCodes), newNick: item?.nick, reason: item?.reason,
            error: presence.type == .error
                ? StanzaErrorInfo(condition: presence.error?.condition ?? .undefinedCondition, text: presence.error?.text)
                : nil,
            affiliation: item?.affiliation, role: item?.role)
        translated.destroyed = presence.mucUser?.destroy.map { RoomDestruction(reason: $0.reason, alternateVenue: $0.alternateVenue?.bare) }
        translated.avatar = AvatarUpdate(extensions: presence.extensions)
        return translated
    }

    /// A mediated invitation (XEP-0045 §7.8.2: a message from the room's bare JID with `<invite from>` in `muc#user`)
    /// or a direct one (XEP-0249: from the inviter, `<x xmlns='jabber:x:conference' jid>` naming the room) in the
    /// bridge's terms; nil for anything else.
    static func roomInvite(_ message: Message) -> RoomInvite? {
        guard message.type != .error, message.type != .groupchat, let from = message.from, let to = message.to else { return nil }
        if from.resource == nil, from.localpart != nil, let invite = message.mucUser.flatMap(MUCInvite.init) {
            return RoomInvite(room: from.bare, invitee: to.bare, inviter: invite.from, reason: invite.reason)
        }
        // XEP-0249: straight from the inviter, naming the room.
        if let invite = DirectInvite(message) {
            return RoomInvite(room: invite.room, invitee: to.bare, inviter: from.bare, reason: invite.reason)
        }
        return nil
    }
}
