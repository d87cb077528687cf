import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import XMPPComponent
@_exported import struct XMPP.StanzaErrorCondition
@_exported import enum XMPP.MUCAffiliation
@_exported import enum XMPP.MUCRole
@_exported import struct XMPP.MUCStatusCode
@_exported import enum XMPP.JoinOutcome
@_exported import enum XMPP.NickChangeOutcome
@_exported import enum XMPP.SelfPingOutcome
@_exported import struct XMPP.SelfPresence
@_exported import struct XMPP.StanzaError
@_exported import struct XMPP.MessageReferences
@_exported import struct XMPP.ModerationRequest
@_exported import struct XMPP.ChatSignals
@_exported import enum XMPP.ChatState
@_exported import enum XMPP.AvatarUpdate

/// What the bridge core needs from the XMPP side: MUC occupant operations for JIDs under the component, plus vCards,
/// XEP-0363 upload slots and pausing the read side.
///
/// The production implementation is ``SessionXMPPLink`` (the XEP-0114 component connection); tests use a scripted
/// fake. A relay mode (a c2s account) would be a second implementation. Every method may suspend on network I/O.
/// Calls may overlap, also for one room: a portal makes one call at a time, but its `EphemeralSender`, the DMs
/// (`DirectChats`) and the self-service desk call alongside it, and the bridge's XMPP task pauses and resumes reading.
public protocol XMPPLink: Sendable {
    /// Joins `room` as `nick` on behalf of `occupant` (a full JID under the component), asking for no history.
    /// A join that creates the room configures (and so unlocks) it before returning: its archive turned on where the
    /// room's form offers that, else the defaults (an instant room).
    func join(room: JID, nick: String, occupant: JID) async throws -> JoinOutcome
    /// Leaves `room` (unavailable presence from `occupant` to its occupant JID), with an optional status text.
    func leave(room: JID, nick: String, occupant: JID, status: String?) async throws
    /// Changes `occupant`'s nick in `room` (XEP-0045 §7.6).
    func changeNick(room: JID, to nick: String, occupant: JID) async throws -> NickChangeOutcome
    /// Sends a groupchat message from `occupant` with an XEP-0359 origin-id (also used as the stanza id), and the
    /// elements that make it a reply, correction, retraction or reaction (``MessageReferences``); `body` nil: none.
    func sendGroupchat(room: JID, from occupant: JID, body: String?, references: MessageReferences, originID: OriginID) async throws
    /// Asks the room, as `occupant` (who must be a moderator there), to retract a message for everyone (XEP-0425).
    /// Throws ``XMPPLinkError/stanzaError(_:)`` when the room refuses (e.g. `forbidden`).
    func moderate(room: JID, _ request: ModerationRequest, as occupant: JID) async throws
    /// Sends a private message (type `chat`) from `sender` to `recipient` (e.g. a failure notice to an occupant).
    func sendPrivate(from sender: JID, to recipient: JID, body: String) async throws
    /// Sends a MUC private message (XEP-0045 §7.5: `type='chat'` to `room@service/nick`, with an empty muc#user `<x/>`)
    /// from `occupant` (a real JID under the component that is an occupant of the room), carrying `originID` as the
    /// XEP-0359 origin-id and as its `id` (an error reply names it), and what `references` holds (`<unstyled/>`, a
    /// file, a correction, retraction or reaction set; the latter has no body).
    func sendChat(from occupant: JID, to recipient: JID, body: String?, references: MessageReferences, originID: OriginID) async throws
    /// Sets the role of the occupant `nick` in `room`, asked as `occupant` (XEP-0045 §9.6 and §10.4 `muc#admin`;
    /// the asker must be the room's admin or owner to grant moderator). Throws ``XMPPLinkError/stanzaError(_:)`` on refusal.
    func setRole(room: JID, nick: String, role: MUCRole, as occupant: JID) async throws
    /// Sets `jid`'s affiliation with `room` (XEP-0045 §10.3–10.7 `muc#admin`: `owner` to grant ownership, `none` to take
    /// an affiliation away), asked by `actor`: any JID under the component, an occupant or not (the room checks the
    /// asker's affiliation by its bare JID). Throws ``XMPPLinkError/stanzaError(_:)`` on refusal.
    func setAffiliation(room: JID, of jid: JID, to affiliation: MUCAffiliation, as actor: JID) async throws
    /// The bare JIDs `room` lists with `affiliation` (XEP-0045 §9.5, §10.5), asked by `occupant` (an owner or admin).
    func affiliated(room: JID, _ affiliation: MUCAffiliation, as occupant: JID) async throws -> [JID]
    /// Asks `room`, as the occupant `sender`, to invite `invitee` (XEP-0045 §7.8.2 mediated invitation); `id` is the
    /// message's `id`, which a refusal bounced by the room carries back.
    func sendInvite(room: JID, from sender: JID, to invitee: JID, reason: String?, id: OriginID) async throws
    /// Sends a body-less groupchat message from `occupant` carrying only `signals` (a XEP-0085 chat state, a XEP-0333
    /// displayed marker). Best effort: no origin-id, no receipt is waited for.
    func sendSignals(room: JID, from occupant: JID, _ signals: ChatSignals) async throws
    /// XEP-0410 self-ping of `occupant`'s occupant JID: is it still joined?
    func selfPing(room: JID, nick: String, occupant: JID) async throws -> SelfPingOutcome
    /// The room's archive (XEP-0313) after `after` (or since `since` when no id is known), all pages, oldest first.
    func archive(room: JID, as occupant: JID, after: StanzaID?, since: Date?) async throws -> [RoomMessage]
    /// What the room announces in its disco#info (XEP-0030) that the bridge relies on, asked as `occupant`.
    func roomFeatures(room: JID, as occupant: JID) async throws -> RoomFeatures
    /// Sends a subject change (XEP-0045 §8.1: a groupchat message with only `<subject>`) from `occupant` with the
    /// stanza `id` given. The room answers with the change broadcast (from the occupant's nick) or a bounced error
    /// carrying that id (`forbidden` when the occupant may not change the subject); both arrive as events.
    func setSubject(room: JID, subject: String, from occupant: JID, id: OriginID) async throws
    /// Client mode: accepts (`subscribed`) or declines (`unsubscribed`) `requester`'s request to see the account's
    /// presence (RFC 6121 §3.1.4–3.1.5).
    func answerSubscription(of requester: JID, accepted: Bool) async throws
    /// Stops (true) or resumes (false) reading from the XMPP server: while the store cannot write (a full disk) the
    /// bridge takes nothing it could not record, and the server's data waits in the socket instead of in memory.
    func setReadingPaused(_ paused: Bool) async
    /// XEP-0054: the `<vCard xmlns='vcard-temp'>` of `target` (an occupant JID or a real bare JID), asked as `asker`
    /// (one of our JIDs); nil when the answer is an error or holds no vCard.
    func fetchVCard(of target: JID, as asker: JID) async throws -> XElement?
    /// XEP-0153 for a Matrix user's occupant: `avatar` (nil: none) becomes the photo of the vCard `occupant` answers
    /// with and the hash its presences in `room` carry from now on; with `nick` (it is joined) a presence announcing
    /// it goes out now.
    func setPuppetAvatar(_ avatar: StoredAvatar?, occupant: JID, room: JID, nick: String?) async throws
    /// XEP-0363 §3: the first item of `domain` (disco#items) whose disco#info offers HTTP upload, asked as `asker`;
    /// nil when there is none.
    func findUploadService(on domain: JID, as asker: JID) async throws -> HTTPUpload.Service?
    /// XEP-0363 §4: a slot on `service` for a file, requested as `requester`; nil when the service refuses it.
    func requestUploadSlot(on service: JID, fileName: String, size: Int64, contentType: String, as requester: JID) async throws -> HTTPUpload.Slot?
    /// Sends `stanza` as it is (the rooms the component hosts speak for themselves).
    func send(_ stanza: Stanza) async throws
}

extension XMPPLink {
    /// No vCards on a link that cannot ask for them (fakes).
    public func fetchVCard(of target: JID, as asker: JID) async throws -> XElement? { nil }
    /// Avatars are not announced on a link that does not support them (fakes).
    public func setPuppetAvatar(_ avatar: StoredAvatar?, occupant: JID, room: JID, nick: String?) async throws {}
    /// No upload service on a link that cannot look for one (fakes).
    public func findUploadService(on domain: JID, as asker: JID) async throws -> HTTPUpload.Service? { nil }
    /// No slots on a link that cannot ask for them (fakes).
    public func requestUploadSlot(on service: JID, fileName: String, size: Int64, contentType: String, as requester: JID) async throws -> HTTPUpload.Slot? { nil }
    /// A link that hosts no rooms sends nothing of its own (fakes).
    public func send(_ stanza: Stanza) async throws { throw XMPPLinkError.notConnected }
}

/// What a MUC announces about the ids and archive the bridge's exactly-once rests on.
public struct RoomFeatures: Sendable, Equatable {
    /// XEP-0359 §6: the room adds `<stanza-id by='room'>` (`urn:xmpp:sid:0`). Without it a stanza-id in a message may
    /// come from an occupant, so none is trusted.
    public var stanzaIDs: Bool
    /// XEP-0313: the room keeps an archive (`urn:xmpp:mam:2`).
    public var archive: Bool
    /// XEP-0425: which moderation protocol the room speaks, if any.
    public var moderation: ModerationRequest.Version?
    /// The room's name: `muc#roomconfig_roomname` of its `muc#roominfo` form, else its identity's name (nil: none).
    public var name: String?
    /// The room's avatar hash from its disco#info (XEP-0486); nil: the room publishes none there.
    public var avatar: AvatarUpdate?
    /// Whether the entity asked says it is a chat room (a `conference` identity).
    public var isRoom = true
    /// Who may enter, as far as the room's disco#info says.
    public var entry: Entry = .open
    /// The subject its `muc#roominfo` form shows (nil: none, or not shown there).
    public var subject: String?

    /// Who may enter a room (XEP-0045 §6.4 features).
    public enum Entry: Sendable, Equatable {
        case open
        /// `muc_membersonly`.
        case membersOnly
        /// `muc_passwordprotected`.
        case passwordProtected
    }

    public init(stanzaIDs: Bool, archive: Bool, moderation: ModerationRequest.Version? = nil, name: String? = nil,
                avatar: AvatarUpdate? = nil) {
        self.stanzaIDs = stanzaIDs
        self.archive = archive
        self.moderation = moderation
        self.name = name
        self.avatar = avatar
    }

    /// Whether messages missed during downtime can be caught up: an archive, addressed by stanza-ids.
    public var canCatchUp: Bool { stanzaIDs && archive }
}

/// One message of a linked room, live or from the archive, in the bridge's terms: a groupchat message, or (in
/// ``XMPPLinkEvent/privateMessage(_:)``) a MUC private message or the bounce of one of ours.
public struct RoomMessage: Sendable, Equatable {
    /// The room's bare JID.
    public var room: JID
    /// The sender's nick in the room (the resource of the occupant JID).
    public var nick: String
    /// Which of our JIDs this copy was addressed to (the component gets one copy per hosted occupant).
    public var to: JID?
    /// The room's XEP-0359 stanza-id (by = room); the dedupe key.
    public var stanzaID: StanzaID?
    /// The sender's XEP-0359 origin-id (ours for reflections of puppet messages).
    public var originID: OriginID?
    /// The stanza's own `id` attribute.
    public var id: StanzaAttributeID?
    /// XEP-0421 occupant id of the sender, when the room adds it.
    public var occupantID: OccupantID?
    /// The sender's real JID, when the room reveals it (non-anonymous rooms, archives).
    public var realJID: JID?
    public var body: String?
    /// XEP-0203 delay stamp (history, archive, offline delivery).
    public var delay: Date?
    /// Set for `type='error'` messages: the error's condition and text.
    public var error: StanzaErrorInfo?
    /// Whether it came from the archive rather than live.
    public var fromArchive: Bool
    /// What it refers to or how its body is to be read: reply, correction, retraction, moderation, reactions,
    /// fallback ranges, `<unstyled/>`.
    public var references = MessageReferences()
    /// `<subject>` (XEP-0045 §8.1): the room's subject as set by `nick` (`""`: cleared). A message with a subject and
    /// no body is a subject change (or the subject sent on join); one with a body is a plain message.
    public var subject: String?
    /// XEP-0045 status codes of a message from the room itself (104: its configuration changed).
    public var statusCodes: Set<MUCStatusCode> = []
    /// Its XEP-0085 chat state and XEP-0333 displayed marker, if any.
    public var signals = ChatSignals()

    public init(room: JID, nick: String, to: JID? = nil, stanzaID: StanzaID? = nil, originID: OriginID? = nil, id: StanzaAttributeID? = nil,
                occupantID: OccupantID? = nil, realJID: JID? = nil, body: String? = nil, delay: Date? = nil,
                error: StanzaErrorInfo? = nil, fromArchive: Bool = false) {
        self.room = room
        self.nick = nick
        self.to = to
        self.stanzaID = stanzaID
        self.originID = originID
        self.id = id
        self.occupantID = occupantID
        self.realJID = realJID
        self.body = body
        self.delay = delay
        self.error = error
        self.fromArchive = fromArchive
    }
}

/// An occupant's presence in a linked room, in the bridge's terms.
public struct RoomPresence: Sendable, Equatable {
    public var room: JID
    public var nick: String
    /// Which of our JIDs this copy was addressed to.
    public var to: JID?
    /// false for `type='unavailable'`.
    public var available: Bool
    public var occupantID: OccupantID?
    public var realJID: JID?
    /// The occupant's affiliation (`muc#user` `item affiliation`, XEP-0045 §5.2), when the room says.
    public var affiliation: MUCAffiliation?
    /// The occupant's role (`muc#user` `item role`, XEP-0045 §5.1), when the room says.
    public var role: MUCRole?
    /// XEP-0045 status codes (110 self, 201 created, 210 nick rewritten, 303 nick change, 307 kick, 301 ban, …).
    public var statusCodes: Set<MUCStatusCode>
    /// The new nick on a 303 nick change.
    public var newNick: String?
    /// Reason of a kick or ban.
    public var reason: String?
    /// Set for `type='error'` presences.
    public var error: StanzaErrorInfo?
    /// XEP-0045 §10.9: the room was destroyed (`<destroy/>` in the unavailable presence).
    public var destroyed: RoomDestruction?
    /// What its XEP-0153 `vcard-temp:x:update` says about the occupant's avatar; nil: it carries none.
    public var avatar: AvatarUpdate?

    public init(room: JID, nick: String, to: JID? = nil, available: Bool, occupantID: OccupantID? = nil, realJID: JID? = nil,
                statusCodes: Set<MUCStatusCode> = [], newNick: String? = nil, reason: String? = nil, error: StanzaErrorInfo? = nil,
                affiliation: MUCAffiliation? = nil, role: MUCRole? = nil) {
        self.room = room
        self.affiliation = affiliation
        self.role = role
        self.nick = nick
        self.to = to
        self.available = available
        self.occupantID = occupantID
        self.realJID = realJID
        self.statusCodes = statusCodes
        self.newNick = newNick
        self.reason = reason
        self.error = error
    }
}

/// Why a MUC was destroyed and where its people went (XEP-0045 §10.9 `<destroy jid><reason/></destroy>`).
public struct RoomDestruction: Sendable, Equatable {
    /// `<reason/>`, when given.
    public var reason: String?
    /// The alternate venue (`jid`), when given.
    public var alternateVenue: JID?

    public init(reason: String? = nil, alternateVenue: JID? = nil) {
        self.reason = reason
        self.alternateVenue = alternateVenue
    }
}

/// A stanza error's defined condition and optional text.
public struct StanzaErrorInfo: Sendable, Equatable {
    public var condition: StanzaErrorCondition
    public var text: String?
    /// The error's type is `wait` (RFC 6120 §8.3.2: "retry after waiting"): a room's or server's rate limit, say —
    /// the bridge paces and tries again rather than telling anyone it failed.
    public var retryLater: Bool
    public init(condition: StanzaErrorCondition, text: String? = nil, retryLater: Bool = false) {
        self.condition = condition
        self.text = text
        self.retryLater = retryLater
    }
}

/// Everything the XMPP link reports to the bridge, in arrival order.
public enum XMPPLinkEvent: Sendable {
    /// The component is connected (again): rooms must be (re)joined and caught up.
    case connected(reconnected: Bool)
    /// The link dropped; it reconnects by itself.
    case disconnected(reason: String)
    case message(RoomMessage)
    case presence(RoomPresence)
    /// A MUC private message (`type='chat'` from an occupant JID) to one of our occupants, or (with ``RoomMessage/error``
    /// set) an error bounced for one of our private messages. Portals hand them to the Matrix user's DM; the
    /// self-service consent handshake reads the MUC owner's answer from one.
    case privateMessage(RoomMessage)
    /// A room forwards a mediated invitation (XEP-0045 §7.8.2) to one of our JIDs (a Matrix user's puppet, or the
    /// bridge's own), or someone sent the bridge's account a direct one (XEP-0249).
    case invite(RoomInvite)
    /// Client mode: what became of the XEP-0198 session at a (re)connection (for the metrics; rooms act on `connected`).
    case session(XMPPSessionChange)
    /// Client mode: someone asks to see the account's presence (RFC 6121 §3.1.3); answered as the config says.
    case subscriptionRequest(from: JID)
    /// A stanza to a room the component hosts for XMPP users (`#alias%server@component`, gateway mode), as it came.
    case gateway(Stanza)
}

/// What became of client mode's XEP-0198 session when the link came up again.
public enum XMPPSessionChange: Sendable, Equatable {
    /// The session went on; this many of our stanzas the server had not acknowledged were sent again.
    case resumed(resent: Int)
    /// The server no longer held it (the window passed): a new one was bound; this many of ours may not have arrived.
    case resumeFailed(unknown: Int)
}

/// An invitation to a room for one of our JIDs, in the bridge's terms: mediated (forwarded by the room) or direct
/// (XEP-0249, from anyone: the room it names is only a claim).
public struct RoomInvite: Sendable, Equatable {
    /// The room's bare JID.
    public var room: JID
    /// The invitee: one of our JIDs (a puppet's, when the invite is for a Matrix user).
    public var invitee: JID
    /// The inviter's JID as the room gives it.
    public var inviter: JID?
    public var reason: String?

    public init(room: JID, invitee: JID, inviter: JID?, reason: String?) {
        self.room = room
        self.invitee = invitee
        self.inviter = inviter
        self.reason = reason
    }
}
