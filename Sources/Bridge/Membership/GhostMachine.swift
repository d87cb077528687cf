import IsthmusCommon
import IsthmusStore

/// The MUC's occupants other than ours, and the Matrix ghosts that stand for them: who is in the room under which
/// nick, which ghost each one has, and what that ghost must do on the Matrix side when the occupant comes, renames or
/// goes. A sub-machine of ``PortalStateMachine``: it owns the occupant and ghost tables (the other sub-machines read
/// them through their `Room` views), and its actions reach the ``Portal`` wrapped in
/// ``PortalStateMachine/Action/ghosts(_:)``. What other machines must hear of (an occupant came or went, a ghost is set
/// up) comes back as a ``Notice`` the portal machine routes; this machine never names them.
struct GhostMachine: Sendable {
    /// What the machine knows without being told.
    struct Configuration: Sendable {
        var room: RoomID
        var muc: JID
        /// The ghost user id for an identity (pure; from the ghost namespace).
        var ghostUserID: @Sendable (String) -> UserID?
    }

    /// What happened, as far as occupants and their ghosts go.
    enum Input: Sendable, Equatable {
        /// The room's ghosts as stored, read at an activation.
        case loaded([RoomGhost])
        /// The bridge's occupant is about to (re)join the MUC: the occupant list is read again from its presences.
        case occupantListCleared
        /// An occupant's available presence (not one of ours).
        case occupantPresent(RoomPresence)
        /// XEP-0045 §7.6: an occupant changed its nick (status 303).
        case occupantRenamed(from: String, to: String)
        /// An occupant left, was kicked (307) or banned (301).
        case occupantLeft(RoomPresence)
        /// The activation is over: once the presences queued during it are handled, ghosts of occupants that are gone
        /// leave (``Action/queueReconciliation``).
        case activated
        /// The occupant list is complete (the queued reconciliation came up).
        case reconcile
        /// The outcome of ``Action/prepare(_:)``.
        case prepared(GhostSetup, error: PortalStateMachine.MatrixFailure?)
        /// The link goes before the room was ever loaded: the stored ghosts are needed to take them out.
        case unlinkRequested(connected: Bool)
        /// The outcome of ``Action/readForUnlink(connected:)`` (nil: they could not be read).
        case readForUnlink([RoomGhost]?, connected: Bool)
        /// What the MUC → Matrix delivery learnt (see ``MatrixDeliveryMachine/Request``): the sender as the room now
        /// identifies it, a ghost's state as its setup saved it, a ghost held for joined found out of the Matrix room.
        case occupantSeen(Occupant)
        case ghostSaved(RoomGhost)
        case ghostOut(UserID)
    }

    /// What the portal must do, in order.
    indirect enum Action: Sendable, Equatable {
        /// → ``Input/prepared(_:error:)``: register the ghost, name it, join it, save it (the steps it needs only).
        case prepare(GhostSetup)
        /// A ghost's per-room displayname changes (nick change), and its saved state with it.
        case rename(RoomGhost)
        /// A ghost leaves the Matrix room (or the bot kicks or bans it, falling back to a leave); then its state is
        /// saved when it has one.
        case remove(UserID, GhostRemoval, saving: RoomGhost?)
        /// Queue ``PortalEvent/reconcileGhosts`` behind the events already queued: the occupants' presences that
        /// arrived during the join must be handled before ghosts of departed occupants are told apart.
        case queueReconciliation
        /// → ``Input/readForUnlink(_:connected:)``: the room's ghosts as stored.
        case readForUnlink(connected: Bool)
        case log(LogEntry)

        /// Whether the machine waits for this action's outcome.
        var awaitsOutcome: Bool {
            switch self {
            case .prepare, .readForUnlink: true
            case .rename, .remove, .queueReconciliation, .log: false
            }
        }
    }

    /// What the portal machine must hear of, in order with the actions: facts, which it routes to whoever cares.
    enum Notice: Sendable, Equatable {
        /// An occupant is present (its affiliation and role recorded) with this ghost, which still needs `setup`.
        case occupantPresent(RoomPresence, ghost: UserID, setup: GhostSetup?)
        /// An occupant left: the occupant list changed.
        case occupantGone
        /// A ghost left the Matrix room.
        case ghostLeft(UserID)
        /// A ghost's setup ended (failed: it is not ready).
        case ghostSetUp(UserID, failed: Bool)
        /// Every ghost of an occupant that is gone was told to leave: the occupant list is complete.
        case occupantListComplete
        /// The stored ghosts are known: the unlink can go on.
        case readyToUnlink(connected: Bool)
    }

    typealias Output = SubMachineOutput<Action, Notice>
    typealias GhostSetup = PortalStateMachine.GhostSetup
    typealias GhostRemoval = PortalStateMachine.GhostRemoval
    typealias LogEntry = PortalStateMachine.LogEntry

    /// A MUC occupant that is not ours, and the ghost standing for it on Matrix.
    struct Occupant: Sendable, Equatable {
        var nick: String
        var occupantID: OccupantID?
        var realJID: JID?
        var ghost: UserID?
        /// XEP-0045 §5: what the room last said about the occupant (nil: nothing yet).
        var affiliation: MUCAffiliation?
        var role: MUCRole?
    }

    let configuration: Configuration
    /// Current occupants of the MUC other than ours, by nick.
    private(set) var occupants: [String: Occupant] = [:]
    /// This room's ghosts as stored (loaded at activation, then kept in step with every write the machine asks for).
    private(set) var ghosts: [UserID: RoomGhost] = [:]
    /// ``ghosts`` were loaded (by an activation).
    private(set) var loaded = false

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Takes one input; returns what to do, in order (an action that awaits its outcome comes last).
    mutating func receive(_ input: Input) -> [Output] {
        switch input {
        case .loaded(let stored):
            ghosts = Self.table(stored)
            loaded = true
            return []
        case .occupantListCleared:
            occupants.removeAll()
            return []
        case .occupantPresent(let presence):
            return occupantPresent(presence)
        case .occupantRenamed(let old, let new):
            return renamed(from: old, to: new)
        case .occupantLeft(let presence):
            return left(presence) + [.portal(.occupantGone)]
        case .activated:
            return [.perform(.queueReconciliation)]
        case .reconcile:
            return reconcile()
        case .prepared(let setup, let error):
            return prepared(setup, error: error)
        case .unlinkRequested(let connected):
            return loaded ? [.portal(.readyToUnlink(connected: connected))] : [.perform(.readForUnlink(connected: connected))]
        case .readForUnlink(let stored, let connected):
            ghosts = Self.table(stored ?? [])
            return [.portal(.readyToUnlink(connected: connected))]
        case .occupantSeen(let occupant):
            occupants[occupant.nick] = occupant
            return []
        case .ghostSaved(let saved):
            ghosts[saved.user] = saved
            return []
        case .ghostOut(let user):
            ghosts[user]?.joined = false
            return []
        }
    }

    private static func table(_ stored: [RoomGhost]) -> [UserID: RoomGhost] {
        Dictionary(stored.map { ($0.user, $0) }, uniquingKeysWith: { first, _ in first })
    }

    private mutating func occupantPresent(_ presence: RoomPresence) -> [Output] {
        guard let plan = plan(nick: presence.nick, occupantID: presence.occupantID, realJID: presence.realJID, joinedNow: true) else {
            return [.perform(.log(LogEntry(level: .error, message: "Could not set up a ghost", metadata: ["xmpp.nick": presence.nick])))]
        }
        record(plan)
        occupants[presence.nick]?.affiliation = presence.affiliation
        occupants[presence.nick]?.role = presence.role
        return [.portal(.occupantPresent(presence, ghost: plan.ghost, setup: plan.setup))] + (plan.setup.map { [.perform(.prepare($0))] } ?? [])
    }

    /// The same ghost, a new per-room displayname.
    private mutating func renamed(from old: String, to new: String) -> [Output] {
        guard var occupant = occupants.removeValue(forKey: old) else {
            guard let plan = plan(nick: new, occupantID: nil, realJID: nil, joinedNow: true) else { return [] }
            record(plan)
            return plan.setup.map { [.perform(.prepare($0))] } ?? []
        }
        occupant.nick = new
        occupants[new] = occupant
        guard let ghost = occupant.ghost else { return [] }
        let renamed = RoomGhost(room: configuration.room, user: ghost, nick: new, occupantID: occupant.occupantID,
                                realJID: occupant.realJID, joined: true)
        ghosts[ghost] = renamed
        return [.perform(.rename(renamed))]
    }

    /// The occupant's ghost leaves, or the bot removes it to show why (kicked or banned).
    private mutating func left(_ presence: RoomPresence) -> [Output] {
        let occupant = occupants.removeValue(forKey: presence.nick)
        let identity = Self.identity(muc: configuration.muc, nick: presence.nick, occupantID: presence.occupantID ?? occupant?.occupantID,
                                     realJID: presence.realJID ?? occupant?.realJID)
        guard let ghost = occupant?.ghost ?? configuration.ghostUserID(identity) else { return [] }
        let banned = presence.statusCodes.contains(.banned)
        let removal: GhostRemoval = banned || presence.statusCodes.contains(.kicked)
            ? .kick(ban: banned, reason: "\(banned ? "Banned" : "Kicked") in the XMPP room" + (presence.reason.map { ": \($0)" } ?? ""))
            : .leave
        var left = ghosts[ghost]
        left?.joined = false
        if let left { ghosts[ghost] = left }
        return [.portal(.ghostLeft(ghost)), .perform(.remove(ghost, removal, saving: left))]
    }

    /// After a (re)join the occupant list is complete: ghosts still joined for occupants that are gone leave.
    private mutating func reconcile() -> [Output] {
        let present = Set(occupants.values.compactMap(\.ghost))
        let stale = ghosts.values.filter { $0.joined && !present.contains($0.user) }.sorted { $0.user.rawValue < $1.user.rawValue }
        let removals: [Output] = stale.flatMap { ghost -> [Output] in
            var left = ghost
            left.joined = false
            ghosts[ghost.user] = left
            return [.portal(.ghostLeft(ghost.user)), .perform(.remove(ghost.user, .leave, saving: left))]
        }
        return removals + [.portal(.occupantListComplete)]
    }

    private mutating func prepared(_ setup: GhostSetup, error: PortalStateMachine.MatrixFailure?) -> [Output] {
        if let error {
            return [.perform(.log(LogEntry(level: .error, message: "Could not set up a ghost", metadata: ["xmpp.nick": setup.nick, "error": "\(error)"]))),
                    .portal(.ghostSetUp(setup.ghost, failed: true))]
        }
        ghosts[setup.ghost] = setup.saved
        return [.perform(.log(LogEntry(level: .debug, message: "Ghost ready", metadata: ["matrix.user.id": setup.ghost.rawValue, "xmpp.nick": setup.nick]))),
                .portal(.ghostSetUp(setup.ghost, failed: false))]
    }

    private mutating func record(_ plan: MatrixDeliveryMachine.GhostPlan) {
        if let occupant = plan.occupant { occupants[occupant.nick] = occupant }
    }
}
