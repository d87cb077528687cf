import IsthmusCommon

/// Routing to the ``InviteMachine`` (mediated invitations both ways): the portal machine hands it each input with a
/// read-only view of the room, and wraps what it returns in ``Action/invites(_:)``, except the inviter's puppet, which
/// it makes ready itself (``PuppetFollowUp/invite(_:)``).
extension PortalStateMachine {
    /// Feeds the invite sub-machine one input.
    mutating func invites(_ input: InviteMachine.Input) -> [Action] {
        invites.receive(input, in: inviteRoom, now: now).flatMap { output -> [Action] in
            switch output {
            case .perform(let action): [.invites(action)]
            case .portal(.puppet(let invite)): ensurePuppet(invite.inviter, then: .invite(invite))
            case .portal(.botInvited(let invite)): botInvited(invite)
            }
        }
    }

    /// What the invite machine may read of the room: closures over copies of the model's tables (copy-on-write, so no
    /// copying), never the portal machine itself.
    private var inviteRoom: InviteMachine.Room {
        let (occupants, ghosts, puppets, displaynames, naming) = (occupants, ghosts, puppets, displaynames, configuration.naming)
        let (bot, isGhost) = (configuration.botUserID, configuration.isGhost)
        return InviteMachine.Room(
            knownRealJID: { ghost in occupants.values.first { $0.ghost == ghost }?.realJID ?? ghosts[ghost]?.realJID },
            name: { displaynames[$0] ?? $0.localpart },
            originID: { naming.originID(for: $0) },
            bridgedUser: { jid in
                // A puppet of this room, else the user the JID's localpart names when it is exactly that user's puppet JID.
                let user = puppets.values.first { $0.occupant.bare == jid.bare }?.user ?? naming.matrixUser(forPuppet: jid)
                return user.flatMap { $0 != bot && !isGhost($0) ? $0 : nil }
            },
            isBridge: { $0.bare == naming.botOccupant.bare },
            occupantNick: { jid in occupants.values.first { $0.realJID?.bare == jid.bare }?.nick },
            muc: configuration.muc)
    }
}
