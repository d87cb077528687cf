import IsthmusCommon

/// Routing to the ``EphemeralMachine`` (typing and read markers): the portal machine hands it each input with a
/// read-only view of the room, and wraps what it returns in ``Action/ephemeral(_:)``.
extension PortalStateMachine {
    /// Feeds the ephemeral sub-machine one input.
    mutating func ephemeral(_ input: EphemeralMachine.Input) -> [Action] {
        ephemeral.receive(input, in: ephemeralRoom, now: now).map(Action.ephemeral)
    }

    /// What the ephemeral machine may read of the room: copies of the model's tables (copy-on-write, so no copying),
    /// never the portal machine itself.
    private var ephemeralRoom: EphemeralMachine.Room {
        let (occupants, ghosts, puppets, naming, botNick) = (occupants, ghosts, puppets, configuration.naming, botNick)
        let canSend = xmppConnected && botJoined
        let (bot, isGhost) = (configuration.botUserID, configuration.isGhost)
        return EphemeralMachine.Room(
            ghostOfOccupant: { occupants[$0]?.ghost },
            joinedGhost: { nick, realJID in
                guard !nick.isEmpty, !Self.isOurOccupant(nick: nick, realJID: realJID, naming: naming, botNick: botNick, puppets: puppets),
                      let ghost = occupants[nick]?.ghost, ghosts[ghost]?.joined == true else { return nil }
                return ghost
            },
            isGhostJoined: { ghosts[$0]?.joined == true },
            joinedPuppet: { user in
                guard canSend, let puppet = puppets[user], puppet.joined else { return nil }
                return puppet.occupant
            },
            isBridged: { $0 != bot && !isGhost($0) },
            stanzaIDs: roomFeatures?.stanzaIDs)
    }
}
