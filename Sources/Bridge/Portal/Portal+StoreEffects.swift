import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The store side of the portal's actions: the message map, the inbox, the room's resume state, and
/// unlink. Runs on the portal's actor; I/O only.
extension Portal {
    func loadRoom() async -> PortalStateMachine.Input {
        let room = link.matrixRoom
        do {
            let now = context.clock.wallNow()
            let stored = try await context.durably { try await context.store.activateRoom(room, at: now) }
            return .roomLoaded(PortalStateMachine.RoomSnapshot(
                puppets: stored.puppets, ghosts: stored.ghosts, firstActivation: stored.firstActivation,
                lastStanzaID: stored.lastStanzaID, activeSince: stored.activeSince, undelivered: stored.undelivered,
                texts: stored.texts, avatar: stored.avatar))
        } catch {
            if await context.storeIsBack(after: error) { return await loadRoom() }
            logger.error("Could not read the room's state", metadata: ["error": "\(error)"])
            return .roomLoaded(nil)
        }
    }

    func loadUndelivered() async -> PortalStateMachine.Input {
        do {
            let room = link.matrixRoom
            return .undeliveredLoaded(try await context.durably { try await context.store.undeliveredMappings(room) })
        } catch {
            logger.error("Could not read undelivered messages", metadata: ["error": "\(error)"])
            return .undeliveredLoaded(nil)
        }
    }

    func dequeue(seq: Int64) async {
        do {
            try await context.durably { try await context.store.deleteInbox(seq: seq) }
        } catch {
            logger.error("Could not dequeue a Matrix event", metadata: ["error": "\(error)"])
        }
    }

    /// Records the link's status for `isthmus links`.
    func setStatus(_ status: RoomLink.Status, detail: String?) async {
        do {
            let room = link.matrixRoom
            try await context.durably { try await context.store.updateRoomLinkStatus(room, status: status, detail: detail) }
        } catch {
            logger.error("Could not record link status", metadata: ["error": "\(error)"])
        }
        context.notify(.status(link.matrixRoom, status))
    }

    /// Unlink: the plan's ghosts leave the Matrix room, puppets and the bridge's occupant leave the MUC, the bot leaves
    /// the Matrix room, and the link's state is deleted. Steps that fail are logged; the link is removed regardless.
    func unlink(_ plan: PortalStateMachine.UnlinkPlan) async {
        logger.info("Unlinking")
        let room = link.matrixRoom
        if let levels = plan.ghostLevels, case .powerLevelsApplied(_, .failed(let failure)) = await applyGhostPowerLevels(levels) {
            logger.warning("Could not take the ghosts' power levels back", metadata: ["error": "\(failure)"])
        }
        for ghost in plan.ghosts {
            do {
                try await context.matrix.leave(room, as: ghost, reason: "The XMPP room was unlinked")
            } catch {
                logger.warning("Ghost could not leave", metadata: ["matrix.user.id": ghost.rawValue, "error": "\(error)"])
            }
        }
        for puppet in plan.puppets {
            try? await context.xmpp.leave(room: link.muc, nick: puppet.nick, occupant: puppet.occupant, status: "The Matrix room was unlinked")
        }
        if let botNick = plan.botNick {
            try? await context.xmpp.leave(room: link.muc, nick: botNick, occupant: context.naming.botOccupant,
                                          status: "The Matrix room was unlinked")
        }
        do {
            try await context.matrix.leave(room, as: context.matrix.botUserID, reason: "Unlinked from \(link.muc)")
        } catch {
            logger.warning("Bot could not leave the Matrix room", metadata: ["error": "\(error)"])
        }
        do {
            try await context.store.deleteRoomGhosts(room)
            try await context.store.deletePuppets(room)
            try await context.store.deleteMappings(room)
            try await context.store.deleteRoomState(room)
            try await context.store.deleteInbox(room: room)
            try await context.store.deleteRoomLink(room)
        } catch {
            logger.error("Could not delete the link's state", metadata: ["error": "\(error)"])
        }
        context.notify(.unlinked(room))
        logger.info("Unlinked")
    }
}
