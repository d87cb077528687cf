import IsthmusCommon
import Matrix

/// The per-link opt-in (`isthmus link --matrix-moderators`, provisioning `matrix_moderators_to_muc`): Matrix users
/// with power level 50 or more get the MUC *role* moderator for their occupant — never an affiliation (owner, admin,
/// member), which outlives the visit and would let a Matrix admin of any homeserver take the MUC over. Off by default
/// (RICH.md §10). The bridge's own occupant sets the roles, so it must be the MUC's admin or owner; a refusal is logged.
extension RolesMachine {
    /// The level from which a Matrix user's occupant is made a MUC moderator.
    static let matrixModeratorLevel: Int64 = 50

    /// What the bridge knows of the Matrix room's power.
    struct MatrixPower: Sendable, Equatable {
        var users: [UserID: Int64]
        var usersDefault: Int64
        /// Room version 12 and later: creators have unlimited power without being listed.
        var privilegedCreators: Set<UserID>

        /// Whether `user` counts as a Matrix moderator: a privileged creator, or level 50 or more.
        func isModerator(_ user: UserID) -> Bool {
            privilegedCreators.contains(user) || (users[user] ?? usersDefault) >= RolesMachine.matrixModeratorLevel
        }
    }

    /// The room's power state was read at activation.
    mutating func matrixPowerRead(_ state: RoomPowerState?, in room: Room) -> [Action] {
        guard let state, case .object? = state.powerLevels else {
            return [.log(LogEntry(level: .warning, message: "Could not read the Matrix room's power levels; MUC moderator roles wait for their next change"))]
        }
        let content = state.decodedPowerLevels ?? PowerLevelsContent()
        let authority = RoomAuthority(roomVersion: state.roomVersion, creators: state.creators)
        matrixPower = MatrixPower(users: content.userLevels,
                                  usersDefault: content.usersDefault ?? 0,
                                  privilegedCreators: authority.creatorsArePrivileged ? state.creators : [])
        return puppetRoles(in: room)
    }

    /// An `m.room.power_levels` event (the inbox row is dequeued by the portal machine).
    mutating func matrixPowerLevelsChanged(users: [UserID: Int64], usersDefault: Int64, in room: Room) -> [Action] {
        guard room.matrixModeratorsToMUC else { return [] }
        matrixPower = MatrixPower(users: users, usersDefault: usersDefault, privilegedCreators: matrixPower?.privilegedCreators ?? [])
        return puppetRoles(in: room)
    }

    /// Joined puppets' MUC roles brought in line with their users' Matrix power: moderator from 50, participant below
    /// (only for occupants the bridge made moderators itself).
    mutating func puppetRoles(in room: Room) -> [Action] {
        guard room.matrixModeratorsToMUC, let matrixPower, room.xmppConnected, room.botJoined else { return [] }
        var actions: [Action] = []
        for puppet in room.joinedPuppets().sorted(by: { $0.user.rawValue < $1.user.rawValue }) {
            let wanted = matrixPower.isModerator(puppet.user)
            if wanted, !moderatedPuppets.contains(puppet.user) {
                moderatedPuppets.insert(puppet.user)
                actions.append(.setMUCRole(nick: puppet.nick, role: .moderator))
            } else if !wanted, moderatedPuppets.contains(puppet.user) {
                moderatedPuppets.remove(puppet.user)
                actions.append(.setMUCRole(nick: puppet.nick, role: .participant))
            }
        }
        return actions
    }
}
