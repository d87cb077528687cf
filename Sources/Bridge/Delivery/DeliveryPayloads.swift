import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import MatrixCrypto

/// The values the delivery sub-machines' actions carry (``MatrixDeliveryMachine``, ``XMPPDeliveryMachine``): a message
/// on its way and what the message map holds about what it refers to.
extension PortalStateMachine {
    /// One XMPP → Matrix message on its way: the Matrix calls it takes (a message; a redaction; a reaction set's
    /// additions and removals), in order, each idempotent by its txnId, then what is recorded once they all went out.
    struct MatrixDelivery: Sendable, Equatable {
        var message: RoomMessage
        /// The dedupe key: the room's stanza-id, or a digest for rooms that do not assign one.
        var key: StanzaID
        /// Who acts: the sender's ghost, or the bot (a moderation by the room).
        var ghost: UserID
        var setup: GhostSetup?
        var sends: [MatrixSend]
        /// The map entry written after the sends (its event id is the first send's).
        var record: MessageMapping
        /// Reactions added (their event ids are filled from the sends, in order) and removed.
        var reactions = ReactionChange()
        /// Attempts so far (the pause before the next one doubles, up to 30 s).
        var attempt = 0
        /// The ghost was found not in the room once and joined again for this delivery (a second refusal is final).
        var rejoined = false

        /// Whether a "not in the room" refusal of this delivery is final: its ghost joined for it already (rejoined,
        /// or its setup joined it just before the send).
        var rejoinIsFinal: Bool { rejoined || setup?.join == true }

        /// The metrics' kind of what is delivered.
        var kind: BridgeMetrics.MessageKind {
            switch record.kind {
            case .message:
                switch sends.first {
                case .message(let outgoing, _)?: .init(outgoing.kind)
                case .media?: .media
                default: .text
                }
            case .edit: .edit
            case .reaction: .reaction
            case .retraction: .retraction
            }
        }
    }

    /// One Matrix call of a delivery.
    enum MatrixSend: Sendable, Equatable {
        case message(OutgoingMatrixMessage, txnID: ClientTransactionID)
        case reaction(target: EventID, key: String, txnID: ClientTransactionID)
        case redaction(EventID, reason: String?, txnID: ClientTransactionID)
        /// A shared file: fetched, uploaded as the ghost and sent as a media message; when that cannot be done (too
        /// large, unreachable, refused address, a web page) `fallback` (the link as text) is sent instead.
        case media(XMPPFileLink, fallback: OutgoingMatrixMessage, txnID: ClientTransactionID)
    }

    /// What the message map holds about the messages an XMPP message refers to.
    struct XMPPTargets: Sendable, Equatable {
        /// The message a XEP-0461 reply answers.
        var reply: MessageMapping?
        /// The original of a XEP-0308 correction (a correction of a correction is followed to it).
        var original: MessageMapping?
        /// The message a XEP-0424 retraction removes.
        var retracted: MessageMapping?
        /// The message a XEP-0444 set reacts to, and the sender's reactions to it so far.
        var reacted: MessageMapping?
        var reactions: [Reaction] = []
        /// Matrix client mode: the other occupants' reactions to that message (the account's reaction for a key is
        /// theirs too).
        var othersReactions: [Reaction] = []
        /// The message a XEP-0425 moderation removed.
        var moderated: MessageMapping?
    }

    /// What the message map holds about the messages a Matrix event refers to.
    struct MatrixTargets: Sendable, Equatable {
        /// The message a reply answers.
        var reply: MessageMapping?
        /// The original of an edit.
        var original: MessageMapping?
        /// The message a reaction is on, or a redacted reaction was on, and the sender's reactions to it so far.
        var reacted: MessageMapping?
        var reactions: [Reaction] = []
        /// Client mode: every Matrix user's reactions to that message, oldest first (the relay's set is their keys).
        var relayedReactions: [Reaction] = []
        /// A redacted message.
        var redacted: MessageMapping?
        /// A redacted reaction.
        var redactedReaction: Reaction?
        /// A media message's file as uploaded to the XMPP server's service (`media.xmpp_upload`): its GET URL.
        var uploadedURL: String?
    }

    /// A Matrix media message's file, to be uploaded to the XMPP server's service (`media.xmpp_upload`) before the
    /// message is mapped: a crash before the send uploads again on the next try, it never sends twice.
    struct MediaUpload: Sendable, Equatable {
        var queued: QueuedMatrixEvent
        /// What the event refers to, read already; the upload's URL is added to it.
        var targets: MatrixTargets
        var mxc: MXCURI
        /// An encrypted file's secrets (the uploader decrypts it first).
        var keys: AttachmentKeys?
        var name: String
        var declaredSize: Int64?
        var mediaType: String?
    }
}
