import IsthmusCommon
import IsthmusStore

/// Roles and power between the two rooms, a sub-machine of ``PortalStateMachine``: it owns its state, reads the room
/// only through the ``Room`` view it is handed with each input, and its actions reach the ``Portal`` wrapped in
/// ``PortalStateMachine/Action/roles(_:)``.
///
/// - MUC affiliations and roles → the ghosts' Matrix power levels, one way, coalesced per burst of presences
///   (`RolesMachine+PowerLevels`).
/// - With the link's opt-in, Matrix moderators → the MUC moderator role for their occupants (`RolesMachine+MatrixModerators`).
/// - The room's ownership taken over from the component's domain JID, once per portal (`RolesMachine+Ownership`).
///
/// The ownership requests are made right after the bot's occupant joined, before the rest of the activation: they
/// await their outcomes, and the portal machine goes on with its agenda once a batch awaits nothing.
struct RolesMachine: Sendable {
    /// What happened, as far as roles and power go.
    enum Input: Sendable, Equatable {
        /// An occupant came, went or changed affiliation or role.
        case occupantsChanged
        /// The occupant list is rebuilt from the presences of a new join: no level is sent until it is complete.
        case occupantListCleared
        /// The occupant list is complete (after the ghost reconciliation that follows a join).
        case occupantListComplete
        /// The queued ``PortalEvent/syncPowerLevels`` came round.
        case syncPowerLevels
        /// The outcome of ``Action/applyGhostPowerLevels(_:)``.
        case powerLevelsApplied(GhostPowerLevels, PowerLevelResult)
        /// The activation's puppets are in the MUC (and its resends went out).
        case puppetsSynced
        /// The outcome of ``Action/readMatrixPower``: the Matrix room's power state (nil: it could not be read).
        case matrixPowerRead(RoomPowerState?)
        /// An `m.room.power_levels` event of the Matrix room.
        case matrixPowerLevelsChanged(users: [UserID: Int64], usersDefault: Int64)
        /// A puppet joined the MUC (a fresh occupant, with the room's default role).
        case puppetJoined(UserID)
        /// A puppet left the MUC for good.
        case puppetRemoved(UserID)
        /// The bot's occupant joined: whether the join created the room, and the affiliation its presence showed.
        case botJoined(created: Bool, affiliation: MUCAffiliation?)
        /// The outcome of ``Action/readOwnership``: who the owner and admin lists name (nil: they could not be read).
        case ownershipRead(OwnershipLists?)
        /// The outcome of ``Action/changeAffiliations(_:)``: the plan's changes were made (nil) or which one failed.
        case affiliationsChanged(OwnershipPlan, OwnershipFailure?)
    }

    /// What the portal must do, in order.
    enum Action: Sendable, Equatable {
        /// → ``Input/powerLevelsApplied(_:_:)``: read `m.room.power_levels`, give the ghosts these levels (and take them
        /// from ghosts not listed), write it back when it changed.
        case applyGhostPowerLevels(GhostPowerLevels)
        /// Queue ``PortalEvent/syncPowerLevels`` behind the events already queued (one change per burst of presences).
        case queuePowerLevelSync
        /// → ``Input/matrixPowerRead(_:)``: the Matrix room's power state.
        case readMatrixPower
        /// The bridge's occupant sets an occupant's role (XEP-0045 §9.6, §10.4); a refusal is logged.
        case setMUCRole(nick: String, role: MUCRole)
        /// → ``Input/ownershipRead(_:)``: the bot reads the room's owner and admin lists.
        case readOwnership
        /// → ``Input/affiliationsChanged(_:_:)``: the plan's affiliation changes, in order, up to the first failure.
        case changeAffiliations(OwnershipPlan)
        case log(LogEntry)

        /// Whether the machine waits for this action's outcome.
        var awaitsOutcome: Bool {
            switch self {
            case .applyGhostPowerLevels, .readMatrixPower, .readOwnership, .changeAffiliations: true
            case .queuePowerLevelSync, .setMUCRole, .log: false
            }
        }
    }

    /// An occupant with a ghost, as far as its level goes.
    struct Occupant: Sendable, Equatable {
        var ghost: UserID
        /// XEP-0045 §5: what the room last said about the occupant (nil: nothing yet).
        var affiliation: MUCAffiliation?
        var role: MUCRole?
    }

    /// What the machine may read of the room's model (kept by the portal machine), handed in with each input.
    struct Room {
        /// The MUC's occupants that have a ghost (not ours), read only when the levels are worked out.
        var occupants: () -> [Occupant]
        /// Matrix users' puppets joined to the MUC.
        var joinedPuppets: () -> [Puppet]
        var xmppConnected: Bool
        var botJoined: Bool
        /// The power level each MUC position gives a ghost.
        var roleLevels: RoleLevels
        /// The link's opt-in: Matrix moderators' occupants get the MUC moderator role.
        var matrixModeratorsToMUC: Bool
        /// The MUC, for log lines.
        var muc: JID
    }

    typealias LogEntry = PortalStateMachine.LogEntry
    typealias MatrixFailure = PortalStateMachine.MatrixFailure
    typealias XMPPFailure = PortalStateMachine.XMPPFailure

    /// Where the ghosts' power levels stand.
    var powerLevelSync = PowerLevelSync()
    /// With the link's opt-in: the Matrix room's power, nil until read.
    var matrixPower: MatrixPower?
    /// Matrix users whose occupants the bridge made MUC moderators.
    var moderatedPuppets: Set<UserID> = []
    /// The room's ownership was taken over from the component's domain JID, or found to need no taking over, during
    /// this portal's life.
    var ownershipSettled = false

    /// Takes one input; returns what to do, in order (an action that awaits its outcome comes last).
    mutating func receive(_ input: Input, in room: Room) -> [Action] {
        switch input {
        case .occupantsChanged: return powerLevelsMayHaveChanged(in: room)
        case .occupantListCleared:
            powerLevelSync.ready = false
            return []
        case .occupantListComplete:
            powerLevelSync.ready = true
            return syncPowerLevels(in: room)
        case .syncPowerLevels: return syncPowerLevels(in: room)
        case .powerLevelsApplied(let levels, let result): return powerLevelsApplied(levels, result)
        case .puppetsSynced: return room.matrixModeratorsToMUC ? [.readMatrixPower] : []
        case .matrixPowerRead(let state): return matrixPowerRead(state, in: room)
        case .matrixPowerLevelsChanged(let users, let usersDefault):
            return matrixPowerLevelsChanged(users: users, usersDefault: usersDefault, in: room)
        case .puppetJoined(let user):
            moderatedPuppets.remove(user)
            return puppetRoles(in: room)
        case .puppetRemoved(let user):
            moderatedPuppets.remove(user)
            return []
        case .botJoined(let created, let affiliation): return settleOwnership(created: created, affiliation: affiliation)
        case .ownershipRead(let lists): return ownershipRead(lists)
        case .affiliationsChanged(let plan, let failed): return affiliationsChanged(plan, failed, in: room)
        }
    }
}
