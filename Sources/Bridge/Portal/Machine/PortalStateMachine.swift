import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// One linked room pair's logic as a value: events from both sides and the outcomes of performed actions go in,
/// actions come out. No I/O, no clock (time is passed in), no `async`. The ``Portal`` actor performs the actions in
/// order and feeds their outcomes back; postgres-nio's connection state machine is the model.
///
/// The machine is a router over sub-machines that own their state and their own `Input`/`Action` enums (the
/// occupants and their ghosts, the Matrix members and their puppets, both deliveries, the catch-up, room state,
/// roles, avatars, ephemeral, invites): this file routes events and outcomes to them, and the `PortalStateMachine+…`
/// router files wrap their actions and carry what they report to whoever cares. The machine itself keeps only the
/// control state — whether each side is up, the activation, the drain and its agenda — and between them they decide
/// nearly everything (the few choices the effects still make are listed in docs/architecture.md): exactly-once (the message map is consulted before a message is translated; our own
/// reflections are receipts), order (activation, catch-up and resends before newer Matrix events; a timeline check
/// before the events behind a suspected hole), nick conflicts, retries, pauses while the XMPP side is unavailable,
/// unlink.
///
/// A piece of work that needs several outcomes in a row (an activation, a drain of the inbox, a puppet's nick
/// negotiation) keeps its remaining steps on an agenda; whenever a batch of actions awaits no outcome the machine
/// goes on with the agenda, so each batch ends with at most one action whose outcome it waits for.
struct PortalStateMachine: Sendable {
    /// The link and the naming rules.
    let configuration: Configuration

    // MARK: Control state
    var xmppConnected = false
    var botJoined = false
    /// An activation is under way (from its start to its first drain): Matrix events wait in the inbox, so the
    /// catch-up and the resends of unreceipted messages go out before anything newer. Its steps normally run in one
    /// go, but an outcome that never comes (a wait cancelled by shutdown) leaves them on the agenda for the next
    /// event to continue; that event must not start a drain ahead of them.
    var activating = false
    /// Matrix events wait: the XMPP side was unavailable.
    var inboxBlocked = false
    /// The next Matrix work reads the store (events were handed in while they could not be handled, or nothing is
    /// known yet).
    var inboxNeedsReload = true
    /// Inbox rows up to here were handled or read: a handed-in copy of one of them is not handled again.
    var highestSeq: Int64 = 0
    var closed = false
    /// The room's features, the archive catch-up and the drain's timeline check: a sub-machine with its own state (see
    /// `PortalStateMachine+CatchUp`).
    var catchUp = CatchUpMachine()
    /// MUC messages to Matrix, exactly once: a sub-machine without state of its own (see
    /// `PortalStateMachine+MatrixDelivery`).
    let matrixDelivery: MatrixDeliveryMachine
    /// Matrix messages to the MUC, exactly once: a sub-machine with its own state (see `PortalStateMachine+XMPPDelivery`).
    var xmppDelivery: XMPPDeliveryMachine
    /// Mediated invitations both ways: a sub-machine with its own state (see `PortalStateMachine+Invites`).
    var invites = InviteMachine()
    /// Encrypted events get a notice, at most one an hour (see ``EncryptedEventNotices``).
    var encryptedNotices = EncryptedEventNotices()
    /// Typing and read markers: a sub-machine with its own state (see `PortalStateMachine+Ephemeral`).
    var ephemeral = EphemeralMachine()
    /// Ghosts' power levels, Matrix moderators' MUC roles and the room's ownership: a sub-machine with its own state
    /// (see `PortalStateMachine+Roles`).
    var roles = RolesMachine()
    /// The ghosts' and puppets' avatars: a sub-machine with its own state (see `PortalStateMachine+Avatars`).
    var avatars = AvatarMachine()
    /// Subject, name, room avatar, upgrades, bridge-info state: a sub-machine with its own state (see
    /// `PortalStateMachine+RoomState`).
    var roomState: RoomStateMachine
    /// The MUC's occupants other than ours and the ghosts standing for them: a sub-machine with its own state (see
    /// `PortalStateMachine+Ghosts`).
    var xmppOccupants: GhostMachine
    /// The Matrix members and the MUC occupants standing for them (puppets): a sub-machine with its own state (see
    /// `PortalStateMachine+Puppets`).
    var matrixMembers: PuppetMachine

    // MARK: Room model
    /// The nick the bridge's own occupant holds.
    var botNick: String
    /// The MUC was destroyed (XEP-0045 §10.9): the bridge stays out of it (rejoining would create it again).
    var destroyed = false

    // MARK: Work in progress
    /// The rest of the current piece of work.
    var agenda: [Step] = []
    /// Whether every resend of the current round went out (false: the XMPP side was unavailable).
    var resendsWentOut = true
    /// The drain in progress, if any.
    var drain: Drain?
    /// The time passed with the input being handled: every decision in ``receive(_:now:)`` reads it from here (set
    /// before anything else; the initial value is never read).
    private(set) var now = ContinuousClock.Instant.now

    init(configuration: Configuration) {
        self.configuration = configuration
        botNick = configuration.naming.botNick
        destroyed = configuration.mucDestroyed
        matrixDelivery = MatrixDeliveryMachine(configuration: .init(
            room: configuration.room, muc: configuration.muc, naming: configuration.naming, botUserID: configuration.botUserID,
            matrixBackoff: configuration.matrixBackoff, relay: configuration.matrixRelay))
        xmppDelivery = XMPPDeliveryMachine(configuration: .init(
            room: configuration.room, muc: configuration.muc, naming: configuration.naming, mediaLinks: configuration.mediaLinks,
            uploadsMedia: configuration.uploadsMedia, relay: configuration.relay))
        xmppOccupants = GhostMachine(configuration: .init(room: configuration.room, muc: configuration.muc,
                                                          ghostUserID: configuration.ghostUserID))
        let (botUserID, isGhost) = (configuration.botUserID, configuration.isGhost)
        matrixMembers = PuppetMachine(configuration: .init(room: configuration.room, naming: configuration.naming,
                                                           isBridged: { $0 != botUserID && !isGhost($0) },
                                                           relayOccupant: configuration.relay == nil ? nil : configuration.naming.botOccupant))
        // An account has no domain JID whose ownership of the room would need taking over.
        if configuration.naming.identity == .account { roles.ownershipSettled = true }
        // The Matrix account speaks for every occupant: there are no ghosts whose levels could follow the MUC's roles.
        if configuration.matrixRelay != nil { roles.powerLevelSync.off = true }
        roomState = RoomStateMachine(configuration: RoomStateMachine.Configuration(
            room: configuration.room, muc: configuration.muc, naming: configuration.naming, botUserID: configuration.botUserID,
            syncName: configuration.syncName, avatars: configuration.avatars))
    }

    /// A MUC occupant that is not ours, and the ghost standing for it on Matrix.
    typealias Occupant = GhostMachine.Occupant

    /// Current occupants of the MUC other than ours, by nick (the ghost machine's, read-only).
    var occupants: [String: Occupant] { xmppOccupants.occupants }
    /// This room's ghosts as stored (the ghost machine's, read-only).
    var ghosts: [UserID: RoomGhost] { xmppOccupants.ghosts }
    /// Matrix users' occupants, by Matrix user (the puppet machine's, read-only).
    var puppets: [UserID: Puppet] { matrixMembers.puppets }
    /// Matrix members' current displaynames (per room), as last seen (the puppet machine's, read-only).
    var displaynames: [UserID: String] { matrixMembers.displaynames }

    /// A Matrix event waiting for the reflection of the message it refers to.
    struct ReceiptWait: Sendable, Equatable {
        var originID: OriginID
        var eventID: EventID
        var until: ContinuousClock.Instant
    }

    /// A drain of the Matrix inbox in progress.
    struct Drain: Sendable, Equatable {
        /// Part of a self-check: the puppet sync and the self-ping follow.
        var selfCheck: Bool
    }

    /// Takes one input; returns what to do, in order (at most the last action awaits an outcome).
    mutating func receive(_ input: Input, now: ContinuousClock.Instant) -> [Action] {
        guard !closed else { return [] }
        self.now = now
        var actions: [Action]
        switch input {
        case .event(let event):
            actions = receive(event)
        default:
            actions = outcome(input)
        }
        while !(actions.last?.awaitsOutcome ?? false), !closed, !agenda.isEmpty {
            actions += run(agenda.removeFirst())
        }
        assert(actions.dropLast().allSatisfy { !$0.awaitsOutcome }, "an awaited action must end its batch")
        return actions
    }

    /// Events of the room, each to the piece of the machine it concerns.
    private mutating func receive(_ event: PortalEvent) -> [Action] {
        switch event {
        case .activate: return activate()
        case .xmppDisconnected: return xmppDisconnected()
        case .xmppMessage(let message): return xmppMessage(message)
        case .xmppPresence(let presence): return xmppPresence(presence)
        case .xmppPrivateMessage(let message): return xmppPrivateMessage(message)
        case .xmppInvite(let invite): return invites(.xmppInvite(invite))
        case .syncPowerLevels: return roles(.syncPowerLevels)
        case .matrixEphemeral(let event): return ephemeral(.matrix(event))
        case .flushEphemeral: return ephemeral(.flush)
        case .matrixEvents(let queued): return handedIn(queued)
        case .resumeDrain: return resumeDrain()
        case .retryInbox: return retryInbox()
        case .timelineGap: return catchUp(.timelineCheckDue)
        case .checkTimeline: return checkTimeline()
        case .reconcileGhosts: return botJoined ? ghosts(.reconcile) : []
        case .roomAvatarSet(let change, let outcome): return roomState(.avatarSet(change, outcome))
        case .selfCheck: return selfCheck()
        // The ghosts to take out are the stored ones: read first when the room was never loaded.
        case .unlink(let connected): return ghosts(.unlinkRequested(connected: connected))
        }
    }

    /// Outcomes of performed actions, each to the piece of the machine that waits for it.
    private mutating func outcome(_ input: Input) -> [Action] {
        switch input {
        case .event: return []
        case .botJoinedMatrix(let error): return botJoinedMatrix(error: error)
        case .botJoinedMUC(let join, let result): return botJoinedMUC(join, result)
        case .botJoinFailed(_, let failure): return botJoinFailed(failure)
        case .selfPinged(let outcome): return selfPinged(outcome)
        case .roomLoaded(let snapshot): return roomLoaded(snapshot)
        case .undeliveredLoaded(let pending): return undeliveredLoaded(pending)
        case .puppets(let input): return puppets(input)
        case .ghosts(let input): return ghosts(input)
        case .matrixDelivery(let input): return matrixDelivery(input)
        case .xmppDelivery(let input): return xmppDelivery(input)
        case .catchUp(let input): return catchUp(input)
        case .ephemeral(let input): return ephemeral(input)
        case .roles(let input): return roles(input)
        case .roomState(let input): return roomState(input)
        case .invites(let input): return invites(input)
        }
    }

    /// Whether Matrix events can go out now.
    var canSend: Bool { xmppConnected && botJoined && !inboxBlocked && !activating }

    /// Whether `user` is a Matrix user the bridge mirrors (not the bot, not one of our ghosts).
    func isBridgedMatrixUser(_ user: UserID) -> Bool {
        matrixMembers.configuration.isBridged(user)
    }
}
