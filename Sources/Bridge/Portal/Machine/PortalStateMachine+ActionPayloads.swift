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

    /// A join of the bridge's own occupant: `attempt` of ten nicks.
    struct BotJoin: Sendable, Equatable {
        var nick: String
        var occupant: JID
        var attempt: Int
    }

    /// Why an XMPP request failed, as far as the machine cares.
    enum XMPPFailure: Error, Sendable, Equatable {
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
