import IsthmusCommon
import IsthmusStore

/// Routing to the ``EphemeralMachine`` (typing and read markers): the portal machine hands it each input with a
/// read-only view of the room, and wraps what it returns in ``Action/ephemeral(_:)``.
extension PortalStateMachine {
    /// Feeds the ephemeral sub-machine one input.
    mutating func ephemeral(_ input: EphemeralMachine.Input) -> [Action] {
        ephemeral.receive(input, in: ephemeralRoom, now: now).map(Action.ephemeral)
    }

    /// What the ephemeral machine may read of the room: the model's tables (copy-on-write, so no copying), never
    /// the portal machine itself. Values read in place, no closure made for it: this view is made for every input, on
    /// the hot path.
    private var ephemeralRoom: EphemeralView {
        EphemeralView(occupants: occupants, ghosts: ghosts, puppets: puppets, naming: configuration.naming, botNick: botNick,
                      canSend: xmppConnected && botJoined, bot: configuration.botUserID, isGhost: configuration.isGhost,
                      stanzaIDs: roomFeatures?.stanzaIDs)
    }

    /// ``EphemeralMachine/Room`` over the portal machine's tables.
    fileprivate struct EphemeralView: EphemeralMachine.Room {
        /// The MUC's occupants other than ours, by nick.
        var occupants: [String: Occupant]
        /// The room's ghosts as stored.
        var ghosts: [UserID: RoomGhost]
        /// The Matrix users' occupants.
        var puppets: [UserID: Puppet]
        /// For telling our own occupants apart (``PortalStateMachine/isOurOccupant(nick:realJID:naming:botNick:puppets:)``).
        var naming: BridgeNaming
        /// The bridge's own occupant's nick.
        var botNick: String
        /// Whether the bridge can send in the MUC (connected, its occupant joined).
        var canSend: Bool
        /// The bridge's Matrix user.
        var bot: UserID
        /// The configuration's ghost test (an existing closure, not one made per view).
        var isGhost: @Sendable (UserID) -> Bool
        var stanzaIDs: Bool?

        func ghostOfOccupant(_ nick: String) -> UserID? { occupants[nick]?.ghost }

        func joinedGhost(_ nick: String, _ realJID: JID?) -> UserID? {
            guard !nick.isEmpty, !PortalStateMachine.isOurOccupant(nick: nick, realJID: realJID, naming: naming, botNick: botNick, puppets: puppets),
                  let ghost = occupants[nick]?.ghost, ghosts[ghost]?.joined == true else { return nil }
            return ghost
        }

        func isGhostJoined(_ ghost: UserID) -> Bool { ghosts[ghost]?.joined == true }

        func joinedPuppet(_ user: UserID) -> JID? {
            guard canSend, let puppet = puppets[user], puppet.joined else { return nil }
            return puppet.occupant
        }

        func isBridged(_ user: UserID) -> Bool { user != bot && !isGhost(user) }
    }
}
