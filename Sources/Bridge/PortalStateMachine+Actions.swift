import FoundationEssentials
import IsthmusCommon
import IsthmusStore

extension PortalStateMachine {
    /// What the ``Portal`` actor must do, in order. Actions marked "→" report an outcome (an ``Input``) that the
    /// actor feeds back before anything else; the machine puts at most one of them in a batch, always last.
    enum Action: Sendable, Equatable {
        // MARK: Matrix side
        /// → ``Input/botJoinedMatrix(error:)``: the bot joins the Matrix room.
        case joinMatrixAsBot
        /// → ``Input/ghostPrepared(_:error:)``: register the ghost, name it, join it, save it (steps it needs only).
        case prepareGhost(GhostSetup)
        /// → ``Input/matrixDelivered(_:eventID:)`` or ``Input/matrixDeliveryFailed(_:_:)``: prepare the ghost if needed,
        /// then send the message as it (idempotent: the txnId is derived from the stanza-id).
        case sendToMatrix(MatrixDelivery)
        /// The same after a pause (the homeserver was unavailable); no outcome when the portal is shutting down.
        case retrySendToMatrix(MatrixDelivery, after: Duration)
        /// A ghost's per-room displayname changes (nick change), and its saved state with it.
        case renameGhost(RoomGhost)
        /// A ghost leaves the Matrix room (or the bot kicks or bans it, falling back to a leave); then its state is
        /// saved when it has one.
        case removeGhost(UserID, GhostRemoval, saving: RoomGhost?)
        /// A notice from the bot in the Matrix room (idempotent per subject).
        case postNotice(String, subject: String)
        /// The bot sets or withdraws the room's bridge-info state (`m.bridge`); a refusal (no power) is logged, no outcome.
        case setBridgeInfo(BridgeInfoState)
        /// → ``Input/membersFetched(_:)``: the Matrix room's joined members.
        case fetchMatrixMembers
        /// → ``Input/memberAvatarsRead(_:)``: the Matrix room's joined members' avatars.
        case readMemberAvatars
        /// A private message to a Matrix user's occupant goes to their DM with the sender's ghost (``DirectChats``).
        case deliverPrivateToMatrix(DirectChatRules.Inbound)
        /// The MUC bounced one of our private messages (from a DM): the DM is told (``DirectChats``).
        case reportPrivateBounce(originID: OriginID, nick: String, error: StanzaErrorInfo)
        /// → ``Input/powerLevelsApplied(_:_:)``: read `m.room.power_levels`, give the ghosts these levels (and take them
        /// from ghosts not listed), write it back when it changed.
        case applyGhostPowerLevels(GhostPowerLevels)
        /// → ``Input/matrixPowerRead(_:)``: the Matrix room's power state.
        case readMatrixPower
        /// The bot invites a Matrix user into the room (a mediated invitation from the MUC); a failure is logged.
        case inviteToMatrix(UserID, reason: String)

        // MARK: XMPP side
        /// → ``Input/mucJoined(_:_:)``: an occupant of ours joins the MUC (or changes nick, when `change`).
        case joinMUC(MUCJoin)
        /// An occupant of ours leaves the MUC, with a status text.
        case leaveMUC(nick: String, occupant: JID, status: String?)
        /// → ``Input/groupchatSent(_:_:)``: a groupchat message from a puppet, with our origin-id.
        case sendGroupchat(XMPPDelivery)
        /// → ``Input/moderated(_:_:)``: a Matrix moderator's puppet asks the room to retract an XMPP message (XEP-0425).
        case moderate(ModerationJob)
        /// A typing notice, chat state or read marker, handed to the portal's ``EphemeralSender`` (never awaited).
        case sendEphemeral(EphemeralSend)
        /// A private message from the bridge's occupant to an occupant.
        case sendPrivate(to: JID, body: String)
        /// The bridge's occupant sets an occupant's role (XEP-0045 §9.6, §10.4); a refusal is logged.
        case setMUCRole(nick: String, role: MUCRole)
        /// A XEP-0045 §7.8.2 mediated invitation from one of our occupants to a real JID; a failure is logged.
        case sendInvite(from: JID, to: JID, reason: String?, id: OriginID)
        /// → ``Input/ownershipRead(_:)``: the bot reads the room's owner and admin lists (see `PortalStateMachine+Ownership`).
        case readOwnership
        /// → ``Input/affiliationsChanged(_:_:)``: the plan's affiliation changes, in order, up to the first failure.
        case changeAffiliations(OwnershipPlan)
        /// → ``Input/selfPinged(joined:)``: XEP-0410 self-ping of the bridge's occupant.
        case selfPing(nick: String)
        /// → ``Input/roomFeaturesRead(_:)``: the room's disco#info (stanza-ids, archive).
        case readRoomFeatures
        /// → ``Input/archiveFetched(_:)``: the MUC archive after `after` (or since `since`).
        case fetchArchive(after: StanzaID?, since: Date?)

        // MARK: Store
        /// → ``Input/roomLoaded(_:)``: records the first activation and reads the room's persisted state.
        case loadRoom
        /// → ``Input/bridgedLookedUp(_:bridged:targets:)``: whether the message map has this stanza-id, and the
        /// mapped messages it refers to (reply, correction, retraction, reactions, moderation).
        case lookUpBridged(RoomMessage)
        /// → ``Input/matrixTargetsResolved(_:_:)``: the mapped messages a Matrix event refers to (reply, edit,
        /// reaction, redaction) and the sender's reactions on a reaction's target.
        case resolveMatrixTargets(QueuedMatrixEvent)
        /// A reflection of one of ours (the receipt, when its origin-id is mapped) or at least the room's new resume point.
        case recordReflection(originID: OriginID?, stanzaID: StanzaID?)
        /// Whether the room keeps an archive with stanza-ids, for `isthmus links`.
        case recordRoomFeatures(RoomFeatures)
        /// An XMPP → Matrix message is bridged (map entry, reaction changes and resume point in one commit).
        case recordBridged(MessageMapping, reactions: ReactionChange = ReactionChange())
        /// An XMPP → Matrix message was refused for good (recorded so it is not retried).
        case recordRefused(MessageMapping)
        /// → ``Input/ownMessageFound(_:mapping:error:)``: the map entry of one of our messages the MUC bounced.
        case lookUpOwnMessage(OriginID, error: StanzaErrorInfo)
        /// One of our messages was refused by the MUC.
        case markFailed(OriginID)
        /// → ``Input/undeliveredLoaded(_:)``: our messages still waiting for their reflection, oldest first.
        case loadUndelivered
        /// → ``Input/ghostAddressFound(_:_:)``: the real JID a ghost stands for, from the ghost table.
        case lookUpGhostAddress(GhostInvite)
        /// → ``Input/inboxRead(_:)``: the room's Matrix inbox from the store, after recovering messages the
        /// homeserver never pushed from the timeline when `checkTimeline`.
        case readInbox(checkTimeline: Bool)
        /// → ``Input/mappingInserted(_:inserted:)``: maps a Matrix message before it goes out, consuming its inbox row
        /// (and recording the reaction change it makes, in the same commit).
        case insertMapping(MessageMapping, consumingInbox: Int64, delivery: XMPPDelivery, reaction: ReactionChange? = nil)
        /// → ``Input/readMarkersResolved(_:_:)``: the mapped messages a read marker names.
        case resolveReadMarkers(ReadMarkerQuery)
        /// A handled inbox row is removed.
        case dequeue(seq: Int64)
        case savePuppet(Puppet)
        case deletePuppet(UserID)
        /// The link's status for `isthmus links`.
        case setStatus(RoomLink.Status, detail: String?)

        // MARK: Room state (subject, name, upgrades)
        /// → ``Input/topicSet(_:_:)``: sets the Matrix room's topic as the change's actor (a ghost or the bot).
        case setMatrixTopic(TopicChange)
        /// The bot sets the Matrix room's name, then records it as the name bridged (a failure is logged, no outcome).
        case setMatrixRoomName(String)
        /// Records the subject/topic both sides now agree on.
        case recordSubject(String)
        /// Records that the MUC was destroyed, with the link's `error` status and its detail (one write).
        case recordDestruction(detail: String)
        /// → ``Input/subjectSent(_:_:)``: a subject change from one of our occupants (the room's reflection or its
        /// bounced error follows as an event).
        case sendSubject(SubjectChange)
        /// A groupchat message from the bridge's own occupant (who changed the subject it set for a Matrix user); its
        /// reflection is ours, never bridged back. Best effort, no outcome.
        case announceInMUC(String)
        /// → ``Input/replacementJoined(_:predecessor:_:)``: the bot joins the room that replaces the upgraded one.
        case joinReplacementRoom(RoomUpgrade)
        /// → ``Input/linkMoved(_:moved:)``: the link and its state move to the replacement room (one commit).
        case moveLink(RoomUpgrade)
        /// After the move: `ghosts` and the bot leave the old room, and the bridge loads the link's portal for the new
        /// room (this portal is closed).
        case finishUpgrade(RoomUpgrade, ghosts: [UserID])

        // MARK: The portal itself
        /// Deliver ``PortalEvent/retryInbox`` at this time.
        case scheduleInboxRetry(at: ContinuousClock.Instant)
        /// Deliver ``PortalEvent/resumeDrain`` at this time.
        case scheduleDrainResume(at: ContinuousClock.Instant)
        /// Deliver ``PortalEvent/flushEphemeral`` at this time (replacing a flush asked for before).
        case scheduleEphemeralFlush(at: ContinuousClock.Instant)
        /// Queue ``PortalEvent/reconcileGhosts`` behind the events already queued: the occupants' presences that
        /// arrived during the join must be handled before ghosts of departed occupants are told apart.
        case queueGhostReconciliation
        /// Queue ``PortalEvent/syncPowerLevels`` behind the events already queued (one change per burst of presences).
        case queuePowerLevelSync
        /// Leave both rooms and forget the link (see ``UnlinkPlan``).
        case unlink(UnlinkPlan)
        case log(LogEntry)
        /// An XMPP occupant's avatar becomes its ghost's per-room avatar (fetched, checked and uploaded once per hash);
        /// failures are logged, no outcome.
        case setGhostAvatar(GhostAvatar)
        /// A Matrix user's avatar becomes its puppet's vCard photo and presence hash (downloaded once per `mxc://`);
        /// failures are logged, no outcome.
        case setPuppetAvatar(PuppetAvatar)
        /// → ``PortalEvent/roomAvatarSet(_:_:)``, queued: the MUC's avatar is fetched from its vCard
        /// (once per hash) and set as the Matrix room's avatar by the bot, or the bridge's avatar there is cleared.
        case setMatrixRoomAvatar(RoomAvatarChange)

        /// Whether the machine waits for this action's outcome.
        var awaitsOutcome: Bool {
            switch self {
            case .joinMatrixAsBot, .prepareGhost, .sendToMatrix, .retrySendToMatrix, .fetchMatrixMembers, .readMemberAvatars, .joinMUC,
                 .sendGroupchat, .selfPing, .readRoomFeatures, .fetchArchive, .loadRoom, .lookUpBridged, .resolveMatrixTargets,
                 .lookUpOwnMessage, .loadUndelivered, .moderate,
                 .readInbox, .insertMapping, .applyGhostPowerLevels, .lookUpGhostAddress, .readMatrixPower,
                 .resolveReadMarkers, .setMatrixTopic, .sendSubject, .joinReplacementRoom, .moveLink,
                 .readOwnership, .changeAffiliations:
                return true
            default:
                return false
            }
        }
    }

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

    /// Why a Matrix call failed, as far as the machine cares.
    enum MatrixFailure: Sendable, Equatable {
        /// Down or overloaded even after the client's own retries: try again later, keeping order.
        case unavailable(String)
        /// Refused for good.
        case refused(String)
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

    /// How a join ended.
    enum JoinOutcome: Sendable, Equatable {
        /// `affiliation`: ours, from the room's self-presence (nil: it gave none).
        case joined(nick: String, created: Bool, affiliation: MUCAffiliation? = nil)
        case nickConflict
        case refused(condition: StanzaErrorCondition, text: String?)
        case failed(XMPPFailure)
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
        case subject(SubjectChange)
        /// A Matrix invitation of a ghost waits to go out as a mediated invitation.
        case invite(GhostInvite)
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

    /// Who leaves what when a link is removed (ghosts come from the store).
    struct UnlinkPlan: Sendable, Equatable {
        /// Puppets to take out of the MUC (only while the XMPP link is up).
        var puppets: [Puppet]
        /// The bridge's occupant's nick, when it is in the MUC.
        var botNick: String?
        /// The ghosts' power levels as they are to be left behind (nil: untouched).
        var ghostLevels: GhostPowerLevels?
    }
}
