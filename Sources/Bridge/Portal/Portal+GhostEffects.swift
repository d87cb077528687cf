import IsthmusCommon
import IsthmusStore

/// The ghost machine's actions (``GhostMachine/Action``): the ghosts' Matrix calls as the ghost or the bot, and
/// their saved state. Runs on the portal's actor; only performs (a kick the homeserver refuses becomes the ghost's
/// own leave).
extension Portal {
    func performGhosts(_ action: GhostMachine.Action) async -> PortalStateMachine.Input? {
        switch action {
        case .prepare(let setup): return await prepareGhostOutcome(setup)
        case .rename(let ghost): await renameGhost(ghost)
        case .remove(let ghost, let removal, let saving): await removeGhost(ghost, removal, saving: saving)
        case .queueReconciliation: enqueue(.reconcileGhosts)
        case .readForUnlink(let connected): return await readGhostsForUnlink(connected: connected)
        case .log(let entry): logger.log(entry.level, entry.message, metadata: entry.metadata)
        }
        return nil
    }

    /// Registers, names, joins and saves a ghost as the setup says (the global name only when the ghost is new).
    func prepareGhost(_ setup: PortalStateMachine.GhostSetup) async throws {
        let room = link.matrixRoom
        try await context.matrix.registerGhost(setup.ghost)
        if try await context.durably({ try await context.store.recordGhost(setup.ghost, identity: setup.identity, globalName: setup.nick) }) {
            try await context.matrix.setDisplayname(setup.nick, for: setup.ghost)
        }
        if setup.join, let devices = context.ghostDevices, (try? await devices.isEncrypted(room, as: context.matrix.botUserID)) == true {
            // Before it joins, so the members' clients find its device when they next share their room keys.
            await devices.prepare(setup.ghost, for: "an encrypted linked room")
        }
        if setup.join { try await context.matrix.join(room, as: setup.ghost) }
        try await context.matrix.setRoomDisplayname(setup.nick, for: setup.ghost, in: room)
        try await context.durably { try await context.store.saveRoomGhost(setup.saved) }
    }

    private func prepareGhostOutcome(_ setup: PortalStateMachine.GhostSetup) async -> PortalStateMachine.Input {
        do {
            try await prepareGhost(setup)
            return .ghosts(.prepared(setup, error: nil))
        } catch {
            return .ghosts(.prepared(setup, error: Self.matrixFailure(error)))
        }
    }

    private func renameGhost(_ ghost: RoomGhost) async {
        do {
            try await context.matrix.setRoomDisplayname(ghost.nick, for: ghost.user, in: link.matrixRoom)
            try await context.durably { try await context.store.saveRoomGhost(ghost) }
        } catch {
            logger.error("Could not rename a ghost", metadata: ["matrix.user.id": ghost.user.rawValue, "error": "\(error)"])
        }
    }

    private func removeGhost(_ ghost: UserID, _ removal: PortalStateMachine.GhostRemoval, saving: RoomGhost?) async {
        let room = link.matrixRoom
        do {
            switch removal {
            case .leave:
                try await context.matrix.leave(room, as: ghost, reason: nil)
            case .kick(let ban, let reason):
                do {
                    try await context.matrix.remove(ghost, from: room, ban: ban, reason: reason)
                } catch {
                    try await context.matrix.leave(room, as: ghost, reason: reason)
                }
            }
            if let saving { try await context.durably { try await context.store.saveRoomGhost(saving) } }
        } catch {
            logger.error("Ghost could not leave", metadata: ["matrix.user.id": ghost.rawValue, "error": "\(error)"])
        }
    }

    /// The room's ghosts as stored, for an unlink before the room was ever loaded.
    private func readGhostsForUnlink(connected: Bool) async -> PortalStateMachine.Input {
        do {
            return .ghosts(.readForUnlink(try await context.store.roomGhosts(link.matrixRoom), connected: connected))
        } catch {
            logger.warning("Could not read the room's ghosts; they stay in the Matrix room", metadata: ["error": "\(error)"])
            return .ghosts(.readForUnlink(nil, connected: connected))
        }
    }
}
