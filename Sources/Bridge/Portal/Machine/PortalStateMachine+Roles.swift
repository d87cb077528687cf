import IsthmusCommon

/// Routing to the ``RolesMachine`` (ghosts' power levels, Matrix moderators' MUC roles, the room's ownership): the
/// portal machine hands it each input with a read-only view of the room, and wraps what it returns in
/// ``Action/roles(_:)``.
extension PortalStateMachine {
    /// Feeds the roles sub-machine one input.
    mutating func roles(_ input: RolesMachine.Input) -> [Action] {
        roles.receive(input, in: rolesRoom).map(Action.roles)
    }

    /// What the roles machine may read of the room: closures over copies of the model's tables (copy-on-write, so no
    /// copying), never the portal machine itself.
    private var rolesRoom: RolesMachine.Room {
        let (occupants, puppets) = (occupants, puppets)
        return RolesMachine.Room(
            occupants: {
                occupants.values.compactMap { occupant in
                    occupant.ghost.map { RolesMachine.Occupant(ghost: $0, affiliation: occupant.affiliation, role: occupant.role) }
                }
            },
            joinedPuppets: { puppets.values.filter(\.joined) },
            xmppConnected: xmppConnected, botJoined: botJoined,
            roleLevels: configuration.roleLevels, matrixModeratorsToMUC: configuration.matrixModeratorsToMUC,
            muc: configuration.muc)
    }
}
