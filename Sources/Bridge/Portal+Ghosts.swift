import Foundation
import IsthmusCommon
import IsthmusStore

extension Portal {
    /// A MUC presence (copy addressed to the bridge's occupant): occupants join, leave, change nick, get kicked.
    /// Returns ``PortalStateMachine/Input/botLeft(rejoin:)`` when the bridge's own occupant left the room.
    func handleXMPPPresence(_ presence: RoomPresence) async -> PortalStateMachine.Input? {
        if presence.error != nil { return nil }
        guard presence.to == nil || presence.to == context.naming.botOccupant else { return nil }
        if presence.statusCodes.contains(110) || presence.nick == botNick {
            return await handleOwnPresence(presence)
        }
        if isOurOccupant(nick: presence.nick, occupantID: presence.occupantID, realJID: presence.realJID) {
            puppetPresence(presence)
            return nil
        }
        if presence.available {
            _ = await ensureGhost(nick: presence.nick, occupantID: presence.occupantID, realJID: presence.realJID, joinedNow: true)
        } else if presence.statusCodes.contains(303), let newNick = presence.newNick {
            await renameOccupant(from: presence.nick, to: newNick)
        } else {
            await occupantLeft(presence)
        }
        return nil
    }

    /// One of our puppets left the room without being asked (kicked, banned, removed after an error): it is no longer
    /// joined, so the next message from its Matrix user rejoins it (and reports a refusal to the user).
    private func puppetPresence(_ presence: RoomPresence) {
        guard !presence.available, !presence.statusCodes.contains(303),
              let user = puppets.first(where: { $0.value.nick == presence.nick })?.key else { return }
        puppets[user]?.joined = false
        logger.notice("A Matrix user's occupant was removed from the MUC", metadata: [
            "matrix.user.id": user.rawValue, "xmpp.status": presence.statusCodes.sorted().map(String.init).joined(separator: ","),
        ])
    }

    /// The bridge's own occupant was removed (kick, ban, shutdown, error): record it; it rejoins unless kicked or banned.
    private func handleOwnPresence(_ presence: RoomPresence) async -> PortalStateMachine.Input? {
        guard !presence.available else { return nil }
        if presence.statusCodes.contains(303), let newNick = presence.newNick {
            botNick = newNick
            return nil
        }
        if presence.statusCodes.contains(307) || presence.statusCodes.contains(301) {
            let what = presence.statusCodes.contains(301) ? "banned" : "kicked"
            logger.error("The bridge was removed from the MUC", metadata: ["xmpp.status": what])
            await setStatus(.error, detail: "the bridge was \(what) from the XMPP room\(presence.reason.map { ": \($0)" } ?? "")")
            return .botLeft(rejoin: false)
        }
        logger.warning("The bridge left the MUC; rejoining", metadata: ["xmpp.status": presence.statusCodes.map(String.init).joined(separator: ",")])
        return .botLeft(rejoin: true)
    }

    /// The identity a ghost is derived from: the real bare JID when visible (one ghost in every room), else the room
    /// plus its XEP-0421 occupant-id, else the room plus the nick.
    func ghostIdentity(nick: String, occupantID: OccupantID?, realJID: JID?) -> String {
        if let realJID { return realJID.bare.description }
        if let occupantID { return "\(link.muc.bare)#occupant-id:\(occupantID.rawValue)" }
        return "\(link.muc.bare)#nick:\(nick)"
    }

    /// Makes sure the occupant `nick` has a ghost that is registered, joined to the Matrix room and named after the
    /// nick there. Cheap when nothing changed (restarts cause no leave/join churn). Logs and returns nil on failure.
    func ensureGhost(nick: String, occupantID: OccupantID?, realJID: JID?, joinedNow: Bool) async -> UserID? {
        do {
            return try await ensureGhostOrThrow(nick: nick, occupantID: occupantID, realJID: realJID, joinedNow: joinedNow)
        } catch {
            logger.error("Could not set up a ghost", metadata: ["xmpp.nick": nick, "error": "\(error)"])
            return nil
        }
    }

    /// ``ensureGhost(nick:occupantID:realJID:joinedNow:)``, throwing what failed.
    func ensureGhostOrThrow(nick: String, occupantID: OccupantID?, realJID: JID?, joinedNow: Bool) async throws -> UserID {
        let known = occupants[nick]
        let identity = ghostIdentity(nick: nick, occupantID: occupantID ?? known?.occupantID, realJID: realJID ?? known?.realJID)
        guard let ghost = known?.ghost ?? context.matrix.ghostUserID(forIdentity: identity) else {
            throw BridgeError.unrepresentable("no ghost id for the occupant \(nick)")
        }
        if joinedNow || known != nil {
            occupants[nick] = Occupant(nick: nick, occupantID: occupantID ?? known?.occupantID,
                                       realJID: realJID ?? known?.realJID, ghost: ghost)
        }
        let room = link.matrixRoom
        let stored = try await storedGhost(ghost)
        if let stored, stored.joined, stored.nick == nick { return ghost }
        try await context.matrix.registerGhost(ghost)
        if try await context.store.recordGhost(ghost, identity: identity, globalName: nick) {
            try await context.matrix.setDisplayname(nick, for: ghost)
        }
        if stored?.joined != true {
            try await context.matrix.join(room, as: ghost)
        }
        try await context.matrix.setRoomDisplayname(nick, for: ghost, in: room)
        try await saveGhost(RoomGhost(room: room, user: ghost, nick: nick, occupantID: occupantID ?? stored?.occupantID,
                                      realJID: realJID ?? stored?.realJID, joined: true))
        logger.debug("Ghost ready", metadata: ["matrix.user.id": ghost.rawValue, "xmpp.nick": nick])
        return ghost
    }

    /// XEP-0045 §7.6 nick change (303): the same ghost, a new per-room displayname.
    private func renameOccupant(from old: String, to new: String) async {
        guard var occupant = occupants.removeValue(forKey: old) else {
            _ = await ensureGhost(nick: new, occupantID: nil, realJID: nil, joinedNow: true)
            return
        }
        occupant.nick = new
        occupants[new] = occupant
        guard let ghost = occupant.ghost else { return }
        do {
            try await context.matrix.setRoomDisplayname(new, for: ghost, in: link.matrixRoom)
            try await saveGhost(RoomGhost(room: link.matrixRoom, user: ghost, nick: new, occupantID: occupant.occupantID,
                                          realJID: occupant.realJID, joined: true))
        } catch {
            logger.error("Could not rename a ghost", metadata: ["matrix.user.id": ghost.rawValue, "error": "\(error)"])
        }
    }

    /// An occupant left, was kicked (307) or banned (301): its ghost leaves, or the bot removes it to show why.
    private func occupantLeft(_ presence: RoomPresence) async {
        let occupant = occupants.removeValue(forKey: presence.nick)
        let identity = ghostIdentity(nick: presence.nick, occupantID: presence.occupantID ?? occupant?.occupantID,
                                     realJID: presence.realJID ?? occupant?.realJID)
        guard let ghost = occupant?.ghost ?? context.matrix.ghostUserID(forIdentity: identity) else { return }
        let room = link.matrixRoom
        let banned = presence.statusCodes.contains(301)
        let kicked = banned || presence.statusCodes.contains(307)
        do {
            if kicked {
                let reason = "\(banned ? "Banned" : "Kicked") in the XMPP room" + (presence.reason.map { ": \($0)" } ?? "")
                do {
                    try await context.matrix.remove(ghost, from: room, ban: banned, reason: reason)
                } catch {
                    try await context.matrix.leave(room, as: ghost, reason: reason)
                }
            } else {
                try await context.matrix.leave(room, as: ghost, reason: nil)
            }
            if var left = try await storedGhost(ghost) {
                left.joined = false
                try await saveGhost(left)
            }
        } catch {
            logger.error("Ghost could not leave", metadata: ["matrix.user.id": ghost.rawValue, "error": "\(error)"])
        }
    }

    /// After a (re)join the occupant list is complete: ghosts still joined for occupants that are gone leave.
    func reconcileGhosts() async {
        guard botJoined else { return }
        let present = Set(occupants.values.compactMap(\.ghost))
        do {
            for ghost in try await allStoredGhosts() where ghost.joined && !present.contains(ghost.user) {
                try await context.matrix.leave(link.matrixRoom, as: ghost.user, reason: nil)
                var left = ghost
                left.joined = false
                try await saveGhost(left)
            }
        } catch {
            logger.error("Could not reconcile ghosts", metadata: ["error": "\(error)"])
        }
    }
}

extension Portal {
    /// This room's stored ghosts (read from the store once per portal).
    func allStoredGhosts() async throws -> [RoomGhost] {
        if let ghostCache { return Array(ghostCache.values) }
        let loaded = try await context.store.roomGhosts(link.matrixRoom)
        ghostCache = Dictionary(loaded.map { ($0.user, $0) }, uniquingKeysWith: { first, _ in first })
        return loaded
    }

    /// One stored ghost of this room.
    func storedGhost(_ user: UserID) async throws -> RoomGhost? {
        if ghostCache == nil { _ = try await allStoredGhosts() }
        return ghostCache?[user]
    }

    /// Writes a ghost's room state through to the store and the cache.
    func saveGhost(_ ghost: RoomGhost) async throws {
        try await context.store.saveRoomGhost(ghost)
        ghostCache?[ghost.user] = ghost
    }
}
