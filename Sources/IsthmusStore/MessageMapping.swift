import FoundationEssentials
import IsthmusCommon

/// One bridged message.
public struct MessageMapping: Sendable, Equatable {
    public enum Direction: String, Sendable { case xmppToMatrix = "x2m", matrixToXMPP = "m2x" }
    public enum State: String, Sendable {
        /// Matrix → XMPP: sent (or about to be), no reflection seen yet.
        case sending
        /// Delivered: the other side's id is known.
        case delivered
        /// The other side refused it; the sender was told.
        case failed
    }
    /// What a row stands for: a message, or an event that refers to one (``target``).
    public enum Kind: String, Sendable {
        case message
        /// A correction (XEP-0308) / `m.replace`.
        case edit
        /// A reaction update (XEP-0444 set) / `m.reaction` or its redaction.
        case reaction
        /// A retraction or moderation (XEP-0424/0425) / `m.room.redaction`.
        case retraction
    }
    public var room: RoomID
    public var eventID: EventID?
    public var stanzaID: StanzaID?
    public var originID: OriginID?
    public var direction: Direction
    /// The sender on the source side.
    public var sender: MessageSender
    public var state: State
    /// Matrix → XMPP: the body as sent, kept until delivered so it can be resent.
    public var body: String?
    public var kind: Kind = .message
    /// The message's `id` attribute (ours: the origin-id); corrections name the original by it, per sender.
    public var xmppID: StanzaAttributeID?
    /// The sender's nick when the message was sent (the `to` of a XEP-0461 reply to it).
    public var nick: String?
    /// For edits, reactions and retractions: the Matrix event of the message they refer to.
    public var target: EventID?
    /// The start of the message's plain text, for the quote of a reply to it.
    public var excerpt: String?
    /// Matrix → XMPP: the outgoing stanza's content (encoded by the bridge), kept until delivered so it can be resent.
    public var payload: String?
    /// Insertion order (resends keep it).
    public var seq: Int64 = 0
    /// When the row was created (set when read from the store; the store stamps new rows itself).
    public var createdAt = Date.distantPast

    public init(room: RoomID, eventID: EventID?, stanzaID: StanzaID?, originID: OriginID?, direction: Direction,
                sender: MessageSender, state: State, body: String? = nil, kind: Kind = .message,
                xmppID: StanzaAttributeID? = nil, nick: String? = nil, target: EventID? = nil, excerpt: String? = nil,
                payload: String? = nil) {
        self.room = room
        self.eventID = eventID
        self.stanzaID = stanzaID
        self.originID = originID
        self.direction = direction
        self.sender = sender
        self.state = state
        self.body = body
        self.kind = kind
        self.xmppID = xmppID
        self.nick = nick
        self.target = target
        self.excerpt = excerpt
        self.payload = payload
    }
}
