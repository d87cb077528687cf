import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The portal's actions for power levels, MUC roles and invitations. Runs on the portal's actor. Not only I/O:
/// `applyGhostPowerLevels(_:)` plans the levels (``GhostPowerLevels/plan(_:bot:isGhost:)``) between its read and its
/// write, and `lookUpGhostAddress(_:)` decides which stored ghost identities are XMPP addresses.
extension Portal {
    /// Performs one action of the roles sub-machine; returns its outcome when the machine waits for one.
    func performRoles(_ action: RolesMachine.Action) async -> PortalStateMachine.Input? {
        switch action {
        case .applyGhostPowerLevels(let levels): return .roles(await applyGhostPowerLevels(levels))
        case .queuePowerLevelSync: enqueue(.syncPowerLevels)
        case .readMatrixPower: return .roles(await readMatrixPower())
        case .setMUCRole(let nick, let role): await setMUCRole(nick: nick, role: role)
        case .readOwnership: return .roles(await readOwnership())
        case .changeAffiliations(let plan): return .roles(await changeAffiliations(plan))
        case .log(let entry): logger.log(entry.level, entry.message, metadata: entry.metadata)
        }
        return nil
    }

    /// Reads the room's power state, plans the ghosts' levels on it and writes the result when anything changed.
    /// Read-modify-write of the current event: every other user's level and every other key are sent back as read.
    func applyGhostPowerLevels(_ levels: GhostPowerLevels) async -> RolesMachine.Input {
        let matrix = context.matrix
        do {
            let state = try await matrix.roomPowerState(link.matrixRoom)
            switch levels.plan(state, bot: matrix.botUserID, isGhost: { matrix.isGhost($0) }) {
            case .unchanged:
                return .powerLevelsApplied(levels, .unchanged)
            case .noPower(let have, let need):
                return .powerLevelsApplied(levels, .noPower(have: have, need: need))
            case .update(let content, let capped, let untouchable):
                try await matrix.setPowerLevels(content, in: link.matrixRoom)
                return .powerLevelsApplied(levels, .updated(capped: capped, untouchable: untouchable))
            }
        } catch MatrixLinkError.unavailable(let reason) {
            return .powerLevelsApplied(levels, .failed(.unavailable(reason)))
        } catch {
            return .powerLevelsApplied(levels, .failed(.refused(Self.describe(error))))
        }
    }

    /// The bot invites `user` into the Matrix room (an XMPP user's mediated invitation); a failure is logged.
    func inviteToMatrix(_ user: UserID, reason: String) async {
        do {
            try await context.matrix.invite(user, to: link.matrixRoom, reason: reason)
            logger.info("Invited a Matrix user for an XMPP occupant", metadata: ["matrix.user.id": user.rawValue])
        } catch {
            logger.warning("Could not invite a Matrix user", metadata: ["matrix.user.id": user.rawValue, "error": "\(error)"])
        }
    }

    /// A mediated invitation from one of our occupants (XEP-0045 §7.8.2); a failure is logged.
    func sendInvite(from sender: JID, to invitee: JID, reason: String?, id: OriginID) async {
        do {
            try await context.xmpp.sendInvite(room: link.muc, from: sender, to: invitee, reason: reason, id: id)
        } catch {
            logger.warning("Could not send an XMPP invitation", metadata: ["error": "\(error)"])
        }
    }

    /// The Matrix room's power state, as the bot reads it (nil: it could not be read).
    private func readMatrixPower() async -> RolesMachine.Input {
        do {
            return .matrixPowerRead(try await context.matrix.roomPowerState(link.matrixRoom))
        } catch {
            logger.warning("Could not read the Matrix room's power levels", metadata: ["error": "\(error)"])
            return .matrixPowerRead(nil)
        }
    }

    /// The bridge's occupant sets `nick`'s role in the MUC; a refusal (the bridge is not the MUC's admin) is logged.
    private func setMUCRole(nick: String, role: MUCRole) async {
        do {
            try await context.xmpp.setRole(room: link.muc, nick: nick, role: role, as: context.naming.botOccupant)
            logger.info("Set a Matrix user's occupant's MUC role", metadata: ["xmpp.nick": nick, "xmpp.role": role.rawValue])
        } catch {
            logger.warning("Could not set a MUC role", metadata: ["xmpp.nick": nick, "xmpp.role": role.rawValue, "error": "\(error)"])
        }
    }

    /// The real bare JID a ghost was derived from, from the ghost table (nil: it stands for a room occupant key).
    func lookUpGhostAddress(_ invite: PortalStateMachine.GhostInvite) async -> PortalStateMachine.Input {
        // Identities of occupants without a known real JID are `room#occupant-id:…` or `room#nick:…`
        // (``PortalStateMachine/ghostIdentity(muc:nick:occupantID:realJID:)``): only a plain bare JID is an address.
        var address: JID?
        if let identity = try? await context.store.ghostIdentity(invite.ghost), !identity.contains("#"),
           let jid = JID(identity), jid.localpart != nil {
            address = jid
        }
        return .ghostAddressFound(invite, address)
    }
}
