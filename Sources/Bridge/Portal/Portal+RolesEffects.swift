import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The portal's actions for power levels and MUC roles. Runs on the portal's actor. Not only I/O:
/// `applyGhostPowerLevels(_:)` plans the levels (``GhostPowerLevels/plan(_:bot:isGhost:)``) between its read and its
/// write.
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
}
