import FoundationEssentials
import IsthmusCommon
import Matrix
import Media
import XMPP

/// What a hosted room's machine knows of its people, reads, takes and returns.
extension GatewayRoomMachine {
    /// An XMPP user in the room.
    public struct Occupant: Sendable, Equatable {
        public var nick: String
        public var ghost: UserID
        /// Its resources (full JIDs) that joined.
        public var resources: Set<JID>
    }

    /// The Matrix room as a joining ghost reads it.
    public struct RoomView: Sendable, Equatable {
        public var room: RoomID
        /// Joined members and their per-room displaynames.
        public var members: [UserID: String?]
        public var topic: String?
        /// Recent messages, oldest first.
        public var history: [HistoryMessage]

        public init(room: RoomID, members: [UserID: String?], topic: String?, history: [HistoryMessage]) {
            self.room = room
            self.members = members
            self.topic = topic
            self.history = history
        }
    }

    /// A message of the Matrix timeline replayed on join.
    public struct HistoryMessage: Sendable, Equatable {
        public var event: EventID
        public var sender: UserID
        public var body: String
        public var sent: Date

        public init(event: EventID, sender: UserID, body: String, sent: Date) {
            self.event = event
            self.sender = sender
            self.body = body
            self.sent = sent
        }
    }

    public enum Input: Sendable {
        /// A presence to the room from an XMPP user's resource: a join (available), a leave (unavailable).
        case xmppPresence(Presence)
        /// A groupchat message to the room.
        case xmppMessage(Message)
        /// A XEP-0410 self-ping or a disco#info to the room or an occupant.
        case xmppIQ(IQ)
        /// The ghost of `user` joined the Matrix room, which reads as `view`.
        case joined(user: JID, view: RoomView)
        /// The Matrix room refused the ghost (or could not be reached).
        case joinRefused(user: JID, StanzaError)
        /// The Matrix room took the message (or correction) `message` of `from` as `event`.
        case sent(from: JID, message: Message, event: EventID)
        /// The Matrix room took the reaction `key` of `from`'s ghost on `target` as `event`.
        case reacted(from: JID, target: EventID, key: String, event: EventID)
        /// The Matrix room refused it.
        case sendRefused(from: JID, message: Message, StanzaError)
        /// An event of the Matrix room.
        case matrix(MatrixRoomEvent)
        /// Typing or read receipts in the Matrix room (best effort, not stored).
        case matrixEphemeral(MatrixEphemeral)
        /// `user` wrote `body` (as `event`) in its private room with `ghost`.
        case matrixPrivate(from: UserID, to: UserID, body: String, event: EventID)
        /// The history a resource that joined an occupant already in asked for, as read (oldest first).
        case historyRead(resource: JID, history: [HistoryMessage], wanted: HistoryWish)
    }

    /// What an XMPP occupant's message becomes in the Matrix room.
    public enum MatrixOutgoing: Sendable, Hashable {
        case text(body: String, replyTo: EventID?)
        /// A file the message shares (OOB, SFS, or a link as the whole body): fetched and uploaded, else its link.
        case file(XMPPFileLink, replyTo: EventID?)
        /// A correction (XEP-0308) of the occupant's message `original`.
        case edit(original: EventID, body: String)
        case reaction(target: EventID, key: String)
        /// A retraction (XEP-0424) of the occupant's message, or a reaction taken back (XEP-0444).
        case redaction(EventID)
    }

    /// One sender's reactions to one message.
    struct ReactionSlot: Sendable, Hashable {
        var sender: UserID
        var target: EventID
    }

    public enum Action: Sendable, Equatable {
        case send(Stanza)
        /// The ghost joins the Matrix room behind the alias and reads it (answered with `joined` or `joinRefused`).
        case joinMatrix(user: JID, ghost: UserID, nick: String)
        /// The ghost leaves the Matrix room.
        case leaveMatrix(ghost: UserID, room: RoomID)
        /// The ghost sends `outgoing`, for `message` (answered with `sent`, `reacted` or `sendRefused`; redactions with
        /// nothing).
        case sendMatrix(from: JID, ghost: UserID, room: RoomID, message: Message, outgoing: MatrixOutgoing)
        /// The ghost writes to `user` in their private Matrix room (opened first when there is none); answered with
        /// `sendRefused` when that fails.
        case sendDirect(from: JID, ghost: UserID, to: UserID, message: Message)
        /// Read the room's last messages as `ghost` for `resource` (answered with `historyRead`).
        case readHistory(resource: JID, ghost: UserID, room: RoomID, wanted: HistoryWish)
        /// The ghost types or stops (XEP-0085 from its occupant).
        case typing(ghost: UserID, room: RoomID, Bool)
        /// The ghost has read up to `event` (XEP-0333 `displayed` from its occupant).
        case readReceipt(ghost: UserID, room: RoomID, event: EventID)
        /// Occupants changed (to persist).
        case occupantsChanged
    }
}
