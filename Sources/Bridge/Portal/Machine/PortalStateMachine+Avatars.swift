import IsthmusCommon

/// Routing to the ``AvatarMachine`` (the ghosts' and puppets' avatars): the portal machine hands it each input with a
/// read-only view of the room, and wraps what it returns in ``Action/avatars(_:)``.
extension PortalStateMachine {
    /// Feeds the avatar sub-machine one input.
    mutating func avatars(_ input: AvatarMachine.Input) -> [Action] {
        avatars.receive(input, in: avatarRoom).map(Action.avatars)
    }

    /// What the avatar machine may read of the room: closures over copies of the model's tables (copy-on-write, so no
    /// copying), never the portal machine itself.
    private var avatarRoom: AvatarMachine.Room {
        let (occupants, puppets, naming) = (occupants, puppets, configuration.naming)
        let (bot, isGhost) = (configuration.botUserID, configuration.isGhost)
        return AvatarMachine.Room(
            occupantRealJID: { occupants[$0]?.realJID },
            puppetJID: { naming.puppetJID(for: $0) },
            joinedPuppetNick: { user in puppets[user].flatMap { $0.joined ? $0.nick : nil } },
            isBridged: { $0 != bot && !isGhost($0) },
            muc: configuration.muc)
    }
}
