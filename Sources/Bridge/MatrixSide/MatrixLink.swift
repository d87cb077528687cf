import FoundationEssentials
import IsthmusCommon
@_exported import struct Matrix.Membership
@_exported import struct Matrix.MessageType
@_exported import struct Matrix.BridgeInfoContent
@_exported import struct Matrix.BridgeInfoState
@_exported import struct Matrix.RelatesTo
@_exported import enum Matrix.JSONValue
@_exported import struct Matrix.PerMessageProfile

/// What the bridge core needs from the Matrix side: client-server calls as the bot or as a ghost.
///
/// The seam between the bridge core (portals, DMs, ephemeral sends, media and avatars) and the Matrix link
/// (production: ``AppServiceMatrixLink``; tests: a fake; a relay mode would add a plain client session). Every `async`
/// method may suspend on network I/O; the three name lookups do none.
public protocol MatrixLink: Sendable {
    /// The bridge bot's user id.
    var botUserID: UserID { get }
    /// The ghost user id for an identity string (a bare JID, or room + occupant key); pure.
    func ghostUserID(forIdentity identity: String) -> UserID?
    /// Whether `user` is one of our ghosts (by namespace).
    func isGhost(_ user: UserID) -> Bool
    /// Registers `ghost` if needed (already registered is success).
    func registerGhost(_ ghost: UserID) async throws
    /// Sets `user`'s global displayname.
    func setDisplayname(_ name: String, for user: UserID) async throws
    /// Makes `user` (the bot or a ghost) join `room`; the bot invites ghosts first when needed.
    func join(_ room: RoomID, as user: UserID) async throws
    /// Makes `user` leave `room`.
    func leave(_ room: RoomID, as user: UserID, reason: String?) async throws
    /// The bot kicks (`ban: false`) or bans `user` from `room`.
    func remove(_ user: UserID, from room: RoomID, ban: Bool, reason: String?) async throws
    /// The bot sets (or, with nil content, withdraws) the room's bridge-info state (MSC2346 `m.bridge` and
    /// `uk.half-shot.bridge`).
    func setBridgeInfo(_ state: BridgeInfoState, in room: RoomID) async throws
    /// Sets `user`'s per-room displayname (its `m.room.member` state) in `room`.
    func setRoomDisplayname(_ name: String, for user: UserID, in room: RoomID) async throws
    /// Sets (nil: removes) `user`'s per-room avatar (`avatar_url` of its `m.room.member` state) in `room`, keeping its
    /// displayname; nothing is sent when it already is that.
    func setRoomAvatar(_ mxc: MXCURI?, for user: UserID, in room: RoomID) async throws
    /// The bot sets the room's own avatar (`m.room.avatar`; nil: `{}`, none).
    func setRoomPicture(_ mxc: MXCURI?, in room: RoomID) async throws
    /// The `url` of the room's `m.room.avatar` as the bot sees it (nil: none).
    func roomPicture(_ room: RoomID) async throws -> MXCURI?
    /// Whether a file `user` posts in `room` must be encrypted before it is uploaded (the room is encrypted and the
    /// link encrypts `user`'s messages there). Throws when the homeserver cannot tell now (never guessed: a file
    /// uploaded in the clear cannot be taken back).
    func encryptsFiles(in room: RoomID, as user: UserID) async throws -> Bool
    /// Sends a message as `user` with a caller-chosen txnId (idempotent); `timestamp` sets `origin_server_ts`. A ghost
    /// refused with `M_FORBIDDEN` (not in the room, or it may not speak) throws ``MatrixLinkError/notInRoom(_:)``.
    func send(_ message: OutgoingMatrixMessage, as user: UserID, in room: RoomID, txnID: ClientTransactionID,
              timestamp: Date?) async throws -> EventID
    /// Sends `user`'s reaction `key` to `target` (`m.reaction`, idempotent by txnId). nil when the homeserver says the
    /// user already reacted so (`M_DUPLICATE_ANNOTATION`: the reaction is there, which is what was asked).
    func react(to target: EventID, key: String, as user: UserID, in room: RoomID, txnID: ClientTransactionID,
               timestamp: Date?) async throws -> EventID?
    /// Redacts `event` as `user` (idempotent by txnId); returns the redaction's event id.
    func redact(_ event: EventID, reason: String?, as user: UserID, in room: RoomID, txnID: ClientTransactionID) async throws -> EventID
    /// Sets `room`'s `m.room.topic` (plain text, also as `m.topic`) as `user` (the bot or a ghost). A refusal (the user
    /// lacks the power) is a `MatrixError` with `M_FORBIDDEN`; the homeserver being down is ``MatrixLinkError/unavailable(_:)``.
    func setTopic(_ topic: String, in room: RoomID, as user: UserID) async throws
    /// Sets `room`'s `m.room.name` as the bot (`""` removes it).
    func setRoomName(_ name: String, in room: RoomID) async throws
    /// The bot joins `room` — the replacement of an upgraded room — through `servers` (the tombstone sender's
    /// homeserver) and returns the room its `m.room.create` names as its predecessor (nil: none).
    func joinReplacement(_ room: RoomID, via servers: [String]) async throws -> RoomID?
    /// Creates a direct chat as `creator` (a ghost) inviting `user` (`POST /createRoom` with `is_direct: true` and the
    /// `trusted_private_chat` preset); returns the new room. Not idempotent: the caller records its intent first.
    func createDirectRoom(as creator: UserID, inviting user: UserID) async throws -> RoomID
    /// `user`'s membership in `room` as `viewer` (a member) sees it; nil when the user never was a member.
    func membership(of user: UserID, in room: RoomID, as viewer: UserID) async throws -> Membership?
    /// The bot invites `user` into `room` (already invited or joined counts as success).
    func invite(_ user: UserID, to room: RoomID, reason: String?) async throws
    /// What `room`'s state says about power (its version, creators and `m.room.power_levels` content), as the bot.
    func roomPowerState(_ room: RoomID) async throws -> RoomPowerState
    /// The bot sets `room`'s `m.room.power_levels` to `content`.
    func setPowerLevels(_ content: JSONValue, in room: RoomID) async throws
    /// Joined members of `room` with their per-room displaynames and avatars (one request).
    func joinedMembers(_ room: RoomID) async throws -> JoinedMembers
    /// Shows (for `timeout`) or clears `user`'s typing notice in `room` (`m.typing`, spec §11.5). Best effort.
    func setTyping(_ typing: Bool, as user: UserID, in room: RoomID, timeout: Duration) async throws
    /// Marks `event` read by `user` (an `m.read` receipt, spec §11.6). Best effort.
    func sendReadReceipt(for event: EventID, as user: UserID, in room: RoomID) async throws
    /// One page of `room`'s timeline as the bot sees it, newest first, continuing from `token` (nil: the newest).
    func timeline(_ room: RoomID, from token: String?, limit: Int) async throws -> MatrixTimelinePage
}

/// A page of a room's timeline (newest first) and where the next, older, page starts (nil: no more).
public struct MatrixTimelinePage: Sendable, Equatable {
    public var entries: [MatrixTimelineEntry]
    public var next: String?

    public init(entries: [MatrixTimelineEntry], next: String?) {
        self.entries = entries
        self.next = next
    }
}

/// One event of a room's timeline: its id and time, and what the bridge would act on (nil: nothing).
public struct MatrixTimelineEntry: Sendable, Equatable {
    public var eventID: EventID
    /// `origin_server_ts`.
    public var timestamp: Date
    /// How long ago the homeserver got it (`unsigned.age`), when it says.
    public var age: Duration?
    /// The event as the appservice handler would queue it; nil for events portals do not act on.
    public var event: MatrixRoomEvent?

    public init(eventID: EventID, timestamp: Date, age: Duration? = nil, event: MatrixRoomEvent?) {
        self.eventID = eventID
        self.timestamp = timestamp
        self.age = age
        self.event = event
    }
}

/// Errors a ``MatrixLink`` reports that the bridge treats specially.
public enum MatrixLinkError: Error, Sendable, Equatable {
    /// The homeserver cannot be reached or failed (network, timeout, 5xx) even after retries: try again later.
    case unavailable(String)
    /// A ghost's message was refused (`M_FORBIDDEN`): it is not in the room, although the caller held it for joined,
    /// or it may not speak there. The caller decides whether it joins and sends again.
    case notInRoom(String)
}

/// A message to post in a Matrix room: its text, and optionally HTML, a reply or edit relation and mentions.
public struct OutgoingMatrixMessage: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        case text = "m.text"
        case emote = "m.emote"
        case notice = "m.notice"
    }
    public var kind: Kind
    public var body: String
    /// `formatted_body` (`org.matrix.custom.html`).
    public var html: String?
    /// A reply (`m.in_reply_to`) or, for an edit, the `m.replace` relation.
    public var relatesTo: RelatesTo?
    /// `m.mentions.user_ids` (always sent, possibly empty, as the spec recommends for bridged messages).
    public var mentions: [UserID]
    /// For an edit: the message as it reads after the edit (`m.new_content`); ``body`` is then `* ` + the new text.
    public var replacement: Replacement?
    /// A file (the message is then `m.image`/`m.video`/`m.audio`/`m.file` and ``body`` its caption or file name).
    public var media: OutgoingMedia?
    /// Matrix client mode: the XMPP occupant the bridge's account speaks for (MSC4144); ``body`` and ``html`` then
    /// start with the fallback naming them (``MatrixRelayFormat``).
    public var profile: PerMessageProfile?

    /// `m.new_content` of an edit.
    public struct Replacement: Sendable, Equatable {
        public var body: String
        public var html: String?
        public var mentions: [UserID]
        public init(body: String, html: String?, mentions: [UserID]) {
            self.body = body
            self.html = html
            self.mentions = mentions
        }
    }

    public init(kind: Kind, body: String, html: String? = nil, relatesTo: RelatesTo? = nil, mentions: [UserID] = [],
                replacement: Replacement? = nil) {
        self.kind = kind
        self.body = body
        self.html = html
        self.relatesTo = relatesTo
        self.mentions = mentions
        self.replacement = replacement
    }

    /// This message as an edit (`m.replace`) of `event`: `* ` + the text as the body for clients without edits, the
    /// text itself as `m.new_content`.
    public func replacing(_ event: EventID) -> OutgoingMatrixMessage {
        var edit = OutgoingMatrixMessage(kind: kind, body: "* " + body, html: html.map { "* " + $0 }, relatesTo: .replacing(event),
                                         mentions: mentions, replacement: Replacement(body: body, html: html, mentions: mentions))
        edit.profile = profile
        return edit
    }
}

extension MatrixLink {
    /// Avatars are not set on a link that does not support them (fakes).
    public func setRoomAvatar(_ mxc: MXCURI?, for user: UserID, in room: RoomID) async throws {}
    /// The room's avatar is not set on a link that does not support it (fakes).
    public func setRoomPicture(_ mxc: MXCURI?, in room: RoomID) async throws {}
    /// No room avatar on a link that does not support it (fakes).
    public func roomPicture(_ room: RoomID) async throws -> MXCURI? { nil }
}

/// A Matrix room event the bridge acts on, reduced to what portals need. Codable: it is queued durably.
public struct MatrixRoomEvent: Sendable, Equatable, Codable {
    public enum Content: Sendable, Equatable, Codable {
        /// `m.room.message` (`msgtype` m.text, m.emote, m.notice, …) with its plain `body`, and what else it carries
        /// (HTML, a reply, an edit — for an edit, msgtype, body and HTML are those of `m.new_content`).
        case message(msgtype: MessageType, body: String, details: MessageDetails? = nil)
        /// `m.reaction`: `key` on `target`.
        case reaction(target: EventID, key: String)
        /// `m.room.redaction` of `target`.
        case redaction(target: EventID, reason: String?)
        /// `m.room.member` for `stateKey`: membership and per-room displayname.
        case member(membership: Membership, displayname: String?, reason: String?)
        /// `m.room.topic`: the room's topic as now set (`""`: removed).
        case topic(String)
        /// `m.room.tombstone`: the room was upgraded; it lives on as `replacement` (spec §11.32 "Room upgrades").
        case tombstone(replacement: RoomID, body: String?)
        /// `m.room.power_levels`: the users listed and `users_default`.
        case powerLevels(users: [UserID: Int64], usersDefault: Int64)
        /// `m.room.encrypted`: an end-to-end encrypted event, which this bridge cannot read (its sender is told).
        case encrypted
        /// `m.room.encryption`: the room turned encryption on; what follows in it is encrypted.
        case encryptionEnabled
    }
    public var eventID: EventID
    public var room: RoomID
    public var sender: UserID
    /// For state events: whom it is about (member events: the user).
    public var stateKey: String?
    public var content: Content
    /// The previous membership (from `unsigned.prev_content`) for member events, when known.
    public var previousMembership: Membership?
    public var previousDisplayname: String?
    /// For member events: the per-room avatar (`avatar_url`), when set to a valid `mxc://` URI.
    public var avatarURL: MXCURI?
    /// For invites: `is_direct` (the inviter means a direct chat), when set.
    public var isDirect: Bool?
    /// For invites: the room is end-to-end encrypted (`m.room.encryption` in the invite's room state), when known.
    public var invitedToEncryptedRoom: Bool?

    public init(eventID: EventID, room: RoomID, sender: UserID, stateKey: String? = nil, content: Content,
                previousMembership: Membership? = nil, previousDisplayname: String? = nil) {
        self.eventID = eventID
        self.room = room
        self.sender = sender
        self.stateKey = stateKey
        self.content = content
        self.previousMembership = previousMembership
        self.previousDisplayname = previousDisplayname
    }
}

/// What a Matrix message carries besides its text. Codable: it is queued durably.
public struct MessageDetails: Sendable, Equatable, Codable {
    /// `formatted_body` when `format` is `org.matrix.custom.html`.
    public var html: String?
    /// The event this message answers (`m.in_reply_to`, not a thread fallback).
    public var replyTo: EventID?
    /// For an edit (`m.replace`): the original event.
    public var replaces: EventID?
    /// `m.mentions.user_ids`.
    public var mentions: [UserID]?
    /// The file of a media message (its `body` is then the file name or a caption).
    public var media: MatrixAttachment?

    public init(html: String? = nil, replyTo: EventID? = nil, replaces: EventID? = nil, mentions: [UserID]? = nil,
                media: MatrixAttachment? = nil) {
        self.html = html
        self.replyTo = replyTo
        self.replaces = replaces
        self.mentions = mentions
        self.media = media
    }

    /// nil when there is nothing besides the text.
    var orNilWhenEmpty: MessageDetails? { self == MessageDetails() ? nil : self }
}

extension MatrixRoomEvent {
    /// The form kept in the store's Matrix inbox (JSON; decoded again by `Portal.readInbox()` and by
    /// `DirectChats` when they read the inbox).
    func inboxPayload() throws -> [UInt8] { Array(try JSONEncoder().encode(self)) }
}
