import IsthmusCommon
import IsthmusStore

/// The decisions of the DM path (MUC private messages ↔ Matrix DM rooms, RICH.md §12), as pure functions: the
/// ``DirectChats`` actor reads the store, asks these what to do, and does it.
enum DirectChatRules {
    /// What a MUC private message to a Matrix user's occupant becomes on Matrix.
    struct Inbound: Sendable, Equatable {
        /// The Matrix user whose occupant was addressed.
        var user: UserID
        /// The sender's ghost (one per XMPP identity, the same as in the linked room) and that identity.
        var ghost: UserID
        var identity: String
        /// The sender's nick (for logs and notices only).
        var nick: String
        var body: String
        /// XEP-0393 `<unstyled/>`.
        var unstyled: Bool
        /// The stanza's `id` (or origin-id): the Matrix txnId is derived from it. nil: the PM carries none.
        var stanzaID: String?
    }

    /// What to do with an event of a DM room.
    enum MatrixStep: Sendable, Equatable {
        /// Send a private message from the Matrix user's occupant to `to` (`room@service/nick`).
        case sendPrivate(to: JID, body: String, unstyled: Bool)
        /// Tell the Matrix user something, as the ghost, with an `m.notice`.
        case notice(String)
        /// The Matrix user left (or was removed from) the DM room: forget it; the next PM creates a new one.
        case forgetRoom
        /// Nothing to bridge (the ghost's own events, an invite, a join, a reaction…).
        case ignore
    }

    /// The decision for one event of `chat`'s DM room. `occupant`: the ghost's current state in the linked room (its
    /// nick, and whether its occupant is still in the MUC); nil when the bridge never saw it there.
    static func step(for event: MatrixRoomEvent, chat: DirectChat, occupant: RoomGhost?) -> MatrixStep {
        switch event.content {
        case .member(let membership, _, _):
            guard event.stateKey == chat.matrixUser.rawValue else { return .ignore }
            return membership == .leave || membership == .ban ? .forgetRoom : .ignore
        case .message(let msgtype, let body, let details):
            guard event.sender == chat.matrixUser, details?.replaces == nil else { return .ignore }
            // Pills become plain names in a DM (there is no room whose nicks they could name).
            guard let text = RichTranslation.toXMPP(msgtype: msgtype, body: body, html: details?.html, nick: { _ in nil }) else {
                return .notice("⚠️ Only text is bridged to XMPP private messages; this message was not delivered.")
            }
            guard let occupant, occupant.joined, let to = chat.muc.bare.with(resource: occupant.nick) else {
                let name = occupant?.nick ?? "This XMPP user"
                return .notice("⚠️ \(name) is not in the XMPP room any more; the message was not delivered.")
            }
            return .sendPrivate(to: to, body: text.body, unstyled: text.unstyled)
        case .reaction, .redaction, .powerLevels, .topic, .tombstone:
            return .ignore
        }
    }

    /// The notice for a private message the MUC bounced (e.g. `item-not-found`: the recipient left).
    static func bounceNotice(nick: String, error: StanzaErrorInfo) -> String {
        let reason = error.text.map { "\(error.condition.rawValue): \($0)" } ?? error.condition.rawValue
        return "⚠️ Your message could not be delivered to \(nick) (\(reason))."
    }
}
