import IsthmusCommon
import IsthmusStore
import Media
import XMPP

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
        /// The file the message shares (OOB, SFS, or a bare link as the whole body), fetched and uploaded when media
        /// is bridged; the text above is then its fallback.
        var file: XMPPFileLink? = nil
    }

    /// What to do with an event of a DM room.
    enum MatrixStep: Sendable, Equatable {
        /// Send a private message from the Matrix user's occupant to `to` (`room@service/nick`).
        case sendPrivate(to: JID, body: String, unstyled: Bool)
        /// Send a file as a private message to `to`: the body is the file's URL alone (as in the room, so XMPP clients
        /// show the attachment), with OOB/SFS `file`; a `caption` follows as a second message.
        case sendFile(to: JID, file: SharedFile, caption: String?)
        /// Tell the Matrix user something, as the ghost, with an `m.notice`.
        case notice(String)
        /// The Matrix user left (or was removed from) the DM room: forget it; the next PM creates a new one.
        case forgetRoom
        /// The Matrix user invited the ghost into this room (a DM they started): the ghost joins.
        case acceptInvite
        /// Nothing to bridge (the ghost's own events, an invite, a join, a reaction…).
        case ignore
    }

    /// The decision for one event of `chat`'s DM room. `occupant`: the ghost's current state in the linked room (its
    /// nick, and whether its occupant is still in the MUC); nil when the bridge never saw it there. `mediaLinks`: the
    /// bridge's signer of file links (nil: media is not served, so a file cannot go).
    static func step(for event: MatrixRoomEvent, chat: DirectChat, occupant: RoomGhost?,
                     mediaLinks: MediaLinkSigner? = nil) -> MatrixStep {
        switch event.content {
        case .member(let membership, _, _):
            if membership == .invite, event.stateKey == chat.ghost.rawValue, event.sender == chat.matrixUser { return .acceptInvite }
            guard event.stateKey == chat.matrixUser.rawValue else { return .ignore }
            return membership == .leave || membership == .ban ? .forgetRoom : .ignore
        case .message(let msgtype, let body, let details):
            guard event.sender == chat.matrixUser, details?.replaces == nil else { return .ignore }
            let file = details?.media.flatMap { fileMessage($0, body: body, html: details?.html, links: mediaLinks) }
            // Pills become plain names in a DM (there is no room whose nicks they could name).
            // A file that cannot go as a link (no media links served) is not sent as its bare file name.
            let text = details?.media == nil ? RichTranslation.toXMPP(msgtype: msgtype, body: body, html: details?.html, nick: { _ in nil }) : nil
            guard file != nil || text != nil else {
                return .notice("⚠️ Only text and files are bridged to XMPP private messages; this message was not delivered.")
            }
            guard let occupant, occupant.joined, let to = chat.muc.bare.with(resource: occupant.nick) else {
                let name = occupant?.nick ?? "This XMPP user"
                return .notice("⚠️ \(name) is not in the XMPP room any more; the message was not delivered.")
            }
            if let file { return .sendFile(to: to, file: file.file, caption: file.caption) }
            guard let text else { return .ignore }
            return .sendPrivate(to: to, body: text.body, unstyled: text.unstyled)
        case .reaction, .redaction, .powerLevels, .topic, .tombstone:
            return .ignore
        }
    }

    /// A Matrix file as the bridge's signed link (``MediaProxy`` serves it) and its caption (pills become plain names,
    /// as in text); nil when no link can be made.
    static func fileMessage(_ attachment: MatrixAttachment, body: String, html: String?,
                            links: MediaLinkSigner?) -> (file: SharedFile, caption: String?)? {
        guard let links, let reference = MediaReference(mxc: attachment.mxc) else { return nil }
        let url = links.url(for: reference, fileName: attachment.name(body: body))
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

    /// A DM a Matrix user starts by inviting a ghost (RICH.md §12, "Matrix-initiated"): it must be a direct chat
    /// (`is_direct`; other invitations are left alone), and runs through a linked room where both have an occupant: preferably one where both are in the
    /// MUC now (a private message reaches only a present occupant), then one where the ghost's occupant is, then the
    /// first they share (where the DM then says why a message was not delivered).
    static func decide(isDirect: Bool?, shared: [SharedRoom]) -> InviteDecision {
        guard isDirect == true else { return .ignore }
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
