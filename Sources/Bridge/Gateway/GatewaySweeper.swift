import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixClient

/// Closes dynamic rooms nobody uses: at start and every `sweepInterval`, each dynamic link's Matrix room is asked for
/// its members (as the bot); a room without a Matrix member is marked idle, and one idle for `gateway.idle_days` is
/// unlinked (the portal leaves the MUC and takes its ghosts out) and closed (alias removed, join rule `invite`, the bot
/// gone). The mark is in the store, so restarts do not reset the count.
struct GatewaySweeper: BridgeService {
    let portals: DynamicPortals

    func run() async {
        let interval = portals.settings.sweepInterval
        while !Task.isCancelled {
            await portals.sweepIdleRooms()
            try? await Task.sleep(for: interval)
        }
    }
}

extension DynamicPortals {
    /// One look at every dynamic link (see ``GatewaySweeper``).
    func sweepIdleRooms() async {
        guard let links = try? await store.roomLinks() else { return }
        let namespace = settings.namespace
        for link in links where link.kind == .dynamic && !link.unlinking {
            let members: [UserID: RoomMemberProfile]
            do {
                members = try await client.joinedMembers(of: link.matrixRoom, as: settings.bot)
            } catch {
                logger.debug("Gateway room's members could not be read", metadata: ["matrix.room": link.matrixRoom.rawValue, "error": error.message])
                continue
            }
            let hasMatrixMember = members.keys.contains { !namespace.isOurs($0) }
            let now = clock.wallNow()
            switch GatewayPolicy.idleStep(link, hasMatrixMember: hasMatrixMember, now: now, idleDays: settings.gateway.idleDays) {
            case .nothing:
                break
            case .markIdle:
                try? await store.setRoomLinkIdle(link.matrixRoom, since: now)
            case .clearIdle:
                try? await store.setRoomLinkIdle(link.matrixRoom, since: nil)
            case .close:
                logger.info("Gateway room closed: no Matrix member for gateway.idle_days", metadata: [
                    "matrix.room": link.matrixRoom.rawValue, "xmpp.muc": link.muc.description,
                    "gateway.idle_days": String(settings.gateway.idleDays)])
                // Closed while the bot is still in the room; the unlink then makes everyone of ours leave.
                let aliases = (try? await client.roomAliases(of: link.matrixRoom, as: settings.bot)) ?? link.matrixAlias.map { [$0] } ?? []
                for alias in aliases where settings.aliases.muc(for: alias) != nil { try? await client.deleteAlias(alias, as: settings.bot) }
                await close(link.matrixRoom, alias: nil, leave: false)
                _ = try? await store.markUnlinking(matrixRoom: link.matrixRoom)
                reloadLinks()
            }
        }
        await refreshRoomCount()
    }
}
