import IsthmusCommon
import Media
import IsthmusStore

extension PortalStateMachine {
    /// The link and the naming rules: everything the machine knows without being told.
    struct Configuration: Sendable {
        var room: RoomID
        var muc: JID
        var naming: BridgeNaming
        var botUserID: UserID
        /// The ghost user id for an identity (pure; from the ghost namespace).
        var ghostUserID: @Sendable (String) -> UserID?
        /// Whether a user id is in the ghost namespace.
        var isGhost: @Sendable (UserID) -> Bool
        /// Whether the MUC's name is copied to the Matrix room (`link --sync-name`).
        var syncName = false
        /// Whether the MUC was destroyed (recorded with the link): the bridge does not join it again.
        var mucDestroyed = false
        /// How long a paused inbox waits after an XMPP request timed out.
        var inboxRetryDelay: Duration = .seconds(5)
        /// The pauses between attempts while the homeserver is unavailable.
        var matrixBackoff = Backoff()
        /// The power level each MUC position gives a ghost.
        var roleLevels = RoleLevels()
        /// The link's opt-in: Matrix moderators' occupants get the MUC moderator role.
        var matrixModeratorsToMUC = false
        /// Signs the links by which XMPP clients fetch Matrix files; nil: media messages go as their text only.
        var mediaLinks: MediaLinkSigner?
        /// Avatars are bridged: after an activation the Matrix members' avatars are read (their puppets announce them).
        var avatars = false
        /// `media.xmpp_upload`: a media message's file is uploaded to the XMPP server first (an effect, with the targets).
        var uploadsMedia = false
        /// Client mode: Matrix users' messages go from the bridge's own occupant in this format (no puppets).
        var relay: RelayFormat? = nil
        /// Matrix client mode: XMPP occupants' messages go from the bridge's Matrix account with a per-message profile,
        /// in this format (their ghosts are only names, never Matrix users).
        var matrixRelay: MatrixRelayFormat? = nil
        /// `encryption.allow`: the ghosts' devices decrypt what is shared with them, so only what they could not
        /// decrypt is told, and turning encryption on changes nothing.
        var decrypts = false
    }

    /// What happened: an event of the room, or the outcome of an action the machine waits for.
    enum Input: Sendable, Equatable {
        case event(PortalEvent)
        /// The bot joined the Matrix room (nil), or why not.
        case botJoinedMatrix(error: MatrixFailure?)
        /// The room answered the bridge's occupant's join.
        case botJoinedMUC(BotJoin, JoinOutcome)
        /// The bridge's occupant's join got no answer.
        case botJoinFailed(BotJoin, XMPPFailure)
        /// What the self-ping of the bridge's occupant says; nil when the ping itself failed.
        case selfPinged(SelfPingOutcome?)
        /// The room's persisted state; nil when it could not be read.
        case roomLoaded(RoomSnapshot?)
        /// Unreceipted messages, oldest first; nil when they could not be read.
        case undeliveredLoaded([MessageMapping]?)
        /// An outcome for the puppet sub-machine (see ``PuppetMachine/Input``).
        case puppets(PuppetMachine.Input)
        /// An outcome for the ghost sub-machine (see ``GhostMachine/Input``).
        case ghosts(GhostMachine.Input)
        /// An outcome for the Matrix → XMPP delivery sub-machine (see ``XMPPDeliveryMachine/Input``).
        case xmppDelivery(XMPPDeliveryMachine.Input)
        /// An outcome for the MUC → Matrix delivery sub-machine (see ``MatrixDeliveryMachine/Input``).
        case matrixDelivery(MatrixDeliveryMachine.Input)
        /// An outcome for the catch-up sub-machine (see ``CatchUpMachine/Input``).
        case catchUp(CatchUpMachine.Input)
        /// An outcome for the ephemeral sub-machine (see ``EphemeralMachine/Input``).
        case ephemeral(EphemeralMachine.Input)
        /// An outcome for the roles sub-machine (see ``RolesMachine/Input``).
        case roles(RolesMachine.Input)
        /// An outcome for the room-state sub-machine (see ``RoomStateMachine/Input``).
        case roomState(RoomStateMachine.Input)
        /// An outcome for the invite sub-machine (see ``InviteMachine/Input``).
        case invites(InviteMachine.Input)
    }

    /// The remaining steps of the piece of work in progress.
    enum Step: Sendable, Equatable {
        case joinBotOccupant(attempt: Int)
        case readRoomFeatures
        case loadRoom
        case bridgeRoomMessage(RoomMessage)
        case syncPuppets
        case ensurePuppet(UserID, then: PuppetFollowUp)
        /// After a puppet sync: puppets of users who are no longer members leave.
        case removeDepartedPuppets(members: Set<UserID>)
        case loadUndelivered
        case resend(MessageMapping)
        /// After the puppet sync and the resends: the roles machine is told (with the link's opt-in it reads the Matrix
        /// room's power, and Matrix moderators' occupants become MUC moderators).
        case puppetsSynced
        case finishActivation
        /// After the resends of a retried inbox: drain it, or wait again.
        case finishRetry
        case handleMatrixEvent(QueuedMatrixEvent)
        case finishDrain(highestSeq: Int64)
        case selfPing
    }
}
