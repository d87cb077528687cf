import IsthmusCommon

/// Routing to the ``RoomStateMachine`` (subject ↔ topic, name, room avatar, upgrades, bridge-info state, destruction):
/// the portal machine hands it each input with a read-only view of the room, wraps what it returns in
/// ``Action/roomState(_:)``, and makes the changes of its own state that the sub-machine asks for
/// (``RoomStateMachine/PortalChange``).
extension PortalStateMachine {
    /// Feeds the room-state sub-machine one input.
    mutating func roomState(_ input: RoomStateMachine.Input) -> [Action] {
        var actions: [Action] = []
        for output in roomState.receive(input, in: roomStateRoom) {
            switch output {
            case .perform(let action): actions.append(.roomState(action))
            case .portal(let change): actions += apply(change)
            }
        }
        return actions
    }

    private mutating func apply(_ change: RoomStateMachine.PortalChange) -> [Action] {
        switch change {
        case .ensurePuppet(let subject):
            return ensurePuppet(subject.user, then: .subject(subject))
        case .xmppUnavailable(let failure):
            return unavailableDuringDrain(failure)
        case .retryInbox:
            return drainBlocked(retry: true)
        case .destroyed:
            destroyed = true
            botJoined = false
            agenda.removeAll()
            drain = nil
            return puppets(.xmppGone)
        case .close:
            closed = true
            agenda.removeAll()
            return []
        }
    }

    /// What the room-state machine may read of the room: copies of the model's tables (copy-on-write, so no copying),
    /// never the portal machine itself.
    private var roomStateRoom: RoomStateMachine.Room {
        let (occupants, ghosts, puppets, displaynames, naming, botNick) = (occupants, ghosts, puppets, displaynames, configuration.naming, botNick)
        let (bot, isGhost) = (configuration.botUserID, configuration.isGhost)
        return RoomStateMachine.Room(
            isOurOccupant: { Self.isOurOccupant(nick: $0, realJID: nil, naming: naming, botNick: botNick, puppets: puppets) },
            botNick: botNick,
            joinedGhost: { occupants[$0]?.ghost.flatMap { ghosts[$0]?.joined == true ? $0 : nil } },
            joinedGhosts: { ghosts.values.filter(\.joined).map(\.user).sorted { $0.rawValue < $1.rawValue } },
            puppetOccupant: { puppets[$0]?.occupant },
            nameInMUC: { puppets[$0]?.nick ?? displaynames[$0] ?? $0.localpart },
            nameInMatrix: { displaynames[$0] ?? $0.localpart },
            isBridged: { $0 != bot && !isGhost($0) },
            botJoined: botJoined,
            announcedName: roomFeatures?.name,
            destroyed: destroyed)
    }

    /// The MUC's configuration changed (status 104): its name or avatar may have, so disco#info is read again.
    mutating func configurationChanged() -> [Action] {
        botJoined ? catchUp(.readFeatures) : []
    }
}
