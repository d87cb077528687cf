import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The values the machine's actions carry (see `PortalStateMachine+Actions.swift` for the actions themselves).
extension PortalStateMachine {
    /// A log line the machine asks for (it does no I/O itself).
    struct LogEntry: Sendable, Equatable {
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata = [:]
    }

    /// What a ghost needs before it can speak for an occupant: the steps are chosen by the machine from the stored state.
    struct GhostSetup: Sendable, Equatable {
        var ghost: UserID
        /// What the ghost id was derived from (recorded with the ghost).
        var identity: String
        var nick: String
        /// Whether it must join the Matrix room (it is not joined as stored).
        var join: Bool
        /// Its state once set up.
        var saved: RoomGhost
    }

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
        var mxc: String
        var name: String
        var declaredSize: Int64?
        var mediaType: String?
    }

    /// Why a Matrix call failed, as far as the machine cares.
    enum MatrixFailure: Sendable, Equatable, CustomStringConvertible {
        /// Down or overloaded even after the client's own retries: try again later, keeping order.
        case unavailable(String)
        /// Refused for good.
        case refused(String)

        var description: String {
            switch self {
            case .unavailable(let reason): "the homeserver is unavailable: \(reason)"
            case .refused(let reason): reason
            }
        }
    }

    /// How a ghost leaves.
    enum GhostRemoval: Sendable, Equatable {
        case leave
        /// The bot kicks (or bans) it with the reason, so Matrix shows why; a plain leave when the bot may not.
        case kick(ban: Bool, reason: String)
    }

    /// A join or nick change of one of our occupants, and why it is done.
    struct MUCJoin: Sendable, Equatable {
        enum Purpose: Sendable, Equatable {
            /// The bridge's own occupant, `attempt` of ten nicks.
            case bot(attempt: Int)
            /// A Matrix user's puppet (see ``PuppetJob``).
            case puppet(PuppetJob)
        }
        var nick: String
        var occupant: JID
        /// A nick change of an occupant already in the room rather than a join.
        var change: Bool
        var purpose: Purpose
    }

    /// Why an XMPP request failed, as far as the machine cares.
    enum XMPPFailure: Sendable, Equatable {
        /// The link is down: wait for the reconnect.
        case notConnected
        /// No answer in time: the server is slow; try again soon.
        case timeout
        /// The room answered with an error.
        case refused(StanzaErrorInfo)
        /// Anything else (described).
        case other(String)

        /// Whether the request should simply wait for the XMPP side (nothing is wrong with the message).
        var isUnavailable: Bool { self == .notConnected || self == .timeout }
    }

    /// A puppet being made ready (joined under the right nick), and what waits for it.
    struct PuppetJob: Sendable, Equatable {
        var user: UserID
        var displayname: String
        var occupant: JID
        /// First nick attempt and the one now tried.
        var firstAttempt: Int
        var attempt: Int
        var then: PuppetFollowUp
    }

    /// What happens once a puppet is ready (or could not be made ready).
    enum PuppetFollowUp: Sendable, Equatable {
        /// A Matrix join (from the inbox): a failure is told in the room.
        case membership(eventID: EventID, seq: Int64)
        /// Bringing puppets in line with the room's members.
        case sync
        /// A message waits to go out.
        case send(XMPPDelivery)
        /// A Matrix topic change waits to go out as the MUC subject.
        case subject(RoomStateMachine.SubjectChange)
        /// A Matrix invitation of a ghost waits to go out as a mediated invitation.
        case invite(InviteMachine.GhostInvite)
    }

    /// A Matrix moderator's redaction of an XMPP user's message, asked of the room by the moderator's puppet.
    struct ModerationJob: Sendable, Equatable {
        var user: UserID
        var occupant: JID
        var request: ModerationRequest
        /// The redaction's inbox row and event.
        var seq: Int64
        var eventID: EventID
    }

    /// One Matrix → XMPP message on its way.
    struct XMPPDelivery: Sendable, Equatable {
        enum Purpose: Sendable, Equatable {
            /// From the inbox (the drain): its row.
            case inbox(seq: Int64)
            /// A resend of an unreceipted message at activation or before a retried drain.
            case resend
            /// A resend after the MUC said the puppet was no longer an occupant.
            case afterRefusal(StanzaErrorInfo)
        }
        var user: UserID
        var originID: OriginID
        var stanza: OutgoingGroupchat
        var purpose: Purpose

        init(user: UserID, originID: OriginID, stanza: OutgoingGroupchat, purpose: Purpose) {
            self.user = user
            self.originID = originID
            self.stanza = stanza
            self.purpose = purpose
        }

        /// A plain text message.
        init(user: UserID, originID: OriginID, body: String, purpose: Purpose) {
            self.init(user: user, originID: originID, stanza: OutgoingGroupchat(body: body), purpose: purpose)
        }
    }

    /// A room's persisted state, read at activation.
    struct RoomSnapshot: Sendable, Equatable {
        var puppets: [Puppet]
        var ghosts: [RoomGhost]
        /// Whether this activation is the link's first.
        var firstActivation: Bool
        var lastStanzaID: StanzaID?
        var activeSince: Date?
        var undelivered: [MessageMapping]
        /// The subject/topic and name last bridged.
        var texts = RoomTexts()
        /// The MUC avatar the bridge set on the Matrix room, if any.
        var avatar: RoomAvatarRecord?
    }

    /// Who leaves what when a link is removed.
    struct UnlinkPlan: Sendable, Equatable {
        /// Ghosts to take out of the Matrix room (those joined, as stored).
        var ghosts: [UserID]
        /// Puppets to take out of the MUC (only while the XMPP link is up).
        var puppets: [Puppet]
        /// The bridge's occupant's nick, when it is in the MUC.
        var botNick: String?
        /// The ghosts' power levels as they are to be left behind (nil: untouched).
        var ghostLevels: GhostPowerLevels?
    }
}
