import FoundationEssentials
import IsthmusCommon
import IsthmusStore

extension PortalStateMachine {
    /// What the ``Portal`` actor must do, in order. Actions marked "→" report an outcome (an ``Input``) that the
    /// actor feeds back before anything else; the machine puts at most one of them in a batch, always last.
    enum Action: Sendable, Equatable {
        /// The bridge's own presence in both rooms (see ``BotAction``); each awaits its outcome.
        case bot(BotAction)
        /// A notice from the bot in the Matrix room (idempotent per subject).
        case postNotice(String, subject: String)
        /// MUC private messages to and from the Matrix users' DMs go to ``DirectChats`` (see ``DirectChatHandoff``).
        case directChats(DirectChatHandoff)

        // MARK: Store
        /// → ``Input/roomLoaded(_:)``: records the first activation and reads the room's persisted state.
        case loadRoom
        /// → ``Input/undeliveredLoaded(_:)``: our messages still waiting for their reflection, oldest first.
        case loadUndelivered
        /// A handled inbox row is removed.
        case dequeue(seq: Int64)
        /// The link's status for `isthmus links`.
        case setStatus(RoomLink.Status, detail: String?)

        // MARK: The portal itself
        /// Queue the timer's event at this time, replacing a pending timer of the same kind.
        case schedule(PortalTimer, at: ContinuousClock.Instant)
        /// Leave both rooms and forget the link (see ``UnlinkPlan``).
        case unlink(UnlinkPlan)
        case log(LogEntry)
        /// The Matrix members' occupants in the MUC (see ``PuppetMachine/Action``); → ``Input/puppets(_:)`` when the wrapped
        /// action awaits one.
        case puppets(PuppetMachine.Action)
        /// The MUC's other occupants' ghosts (see ``GhostMachine/Action``); → ``Input/ghosts(_:)`` when the wrapped action
        /// awaits one.
        case ghosts(GhostMachine.Action)
        /// Matrix messages to the MUC, exactly once (see ``XMPPDeliveryMachine/Action``); → ``Input/xmppDelivery(_:)``
        /// when the wrapped action awaits one.
        case xmppDelivery(XMPPDeliveryMachine.Action)
        /// MUC messages to Matrix, exactly once (see ``MatrixDeliveryMachine/Action``); → ``Input/matrixDelivery(_:)``
        /// when the wrapped action awaits one.
        case matrixDelivery(MatrixDeliveryMachine.Action)
        /// The room's features, the archive catch-up and the drain's timeline check (see ``CatchUpMachine/Action``);
        /// → ``Input/catchUp(_:)`` when the wrapped action awaits one.
        case catchUp(CatchUpMachine.Action)
        /// Typing and read markers (see ``EphemeralMachine/Action``); → ``Input/ephemeral(_:)`` when the wrapped action awaits one.
        case ephemeral(EphemeralMachine.Action)
        /// Power levels, MUC roles and ownership (see ``RolesMachine/Action``); → ``Input/roles(_:)`` when the wrapped action awaits one.
        case roles(RolesMachine.Action)
        /// Subject, name, room avatar, upgrades, bridge-info state and destruction (see ``RoomStateMachine/Action``);
        /// → ``Input/roomState(_:)`` when the wrapped action awaits one.
        case roomState(RoomStateMachine.Action)
        /// The ghosts' and puppets' avatars (see ``AvatarMachine/Action``); no outcome.
        case avatars(AvatarMachine.Action)
        /// Mediated invitations both ways (see ``InviteMachine/Action``); → ``Input/invites(_:)`` when the wrapped action awaits one.
        case invites(InviteMachine.Action)

        /// Whether the machine waits for this action's outcome.
        var awaitsOutcome: Bool {
            switch self {
            case .bot, .loadRoom, .loadUndelivered:
                return true
            case .puppets(let action):
                return action.awaitsOutcome
            case .ghosts(let action):
                return action.awaitsOutcome
            case .matrixDelivery(let action):
                return action.awaitsOutcome
            case .xmppDelivery(let action):
                return action.awaitsOutcome
            case .catchUp(let action):
                return action.awaitsOutcome
            case .ephemeral(let action):
                return action.awaitsOutcome
            case .roles(let action):
                return action.awaitsOutcome
            case .roomState(let action):
                return action.awaitsOutcome
            case .avatars(let action):
                return action.awaitsOutcome
            case .invites(let action):
                return action.awaitsOutcome
            default:
                return false
            }
        }
    }

    /// The bridge's own presence: its Matrix user (the bot) and its occupant in the MUC.
    enum BotAction: Sendable, Equatable {
        /// → ``Input/botJoinedMatrix(error:)``: the bot joins the Matrix room.
        case joinMatrix
        /// → ``Input/botJoinedMUC(_:_:)`` or ``Input/botJoinFailed(_:_:)``: the bridge's occupant joins the MUC.
        case joinMUC(BotJoin)
        /// → ``Input/selfPinged(_:)``: XEP-0410 self-ping of the bridge's occupant.
        case selfPing(nick: String)
    }
}
