import IsthmusCommon

/// Routing to the ``GhostMachine`` (the MUC's other occupants and their ghosts): the portal machine hands it each
/// input, wraps its actions in ``Action/ghosts(_:)``, and tells the machines that care what it reports
/// (``GhostMachine/Notice``): the roles follow the occupant list, the avatars follow the ghosts.
extension PortalStateMachine {
    /// Feeds the ghost sub-machine one input.
    mutating func ghosts(_ input: GhostMachine.Input) -> [Action] {
        var actions: [Action] = []
        for output in xmppOccupants.receive(input) {
            switch output {
            case .perform(let action): actions.append(.ghosts(action))
            case .portal(let notice): actions += heard(notice)
            }
        }
        return actions
    }

    private mutating func heard(_ notice: GhostMachine.Notice) -> [Action] {
        switch notice {
        case .occupantPresent(let presence, let ghost, let setup):
            return roles(.occupantsChanged) + avatars(.occupantPresent(presence, ghost: ghost, setup: setup))
        case .occupantGone:
            return roles(.occupantsChanged)
        case .ghostLeft(let ghost):
            return avatars(.ghostLeft(ghost))
        case .ghostSetUp(let ghost, let failed):
            return avatars(.ghostSetUp(ghost, failed: failed))
        case .occupantListComplete:
            // The ghosts' power levels can follow the occupant list now.
            return roles(.occupantListComplete)
        case .readyToUnlink(let connected):
            return unlink(connected: connected)
        }
    }
}
