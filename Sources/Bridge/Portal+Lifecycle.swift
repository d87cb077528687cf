import Foundation
import IsthmusCommon
import IsthmusStore

extension Portal {
    /// Brings the link up (first start, new link, or after the XMPP link reconnected): the bridge's own occupant and
    /// bot join, the archive fills the gap since the last stanza-id, Matrix members' puppets (re)join, and unreceipted
    /// messages are resent if the archive shows they never arrived — in that order. Reports whether the bridge's
    /// occupant is in the MUC and whether the resends went out; the machine then drains the Matrix inbox.
    func activate() async -> PortalStateMachine.Input {
        do {
            try await context.matrix.join(link.matrixRoom, as: context.matrix.botUserID)
        } catch {
            logger.error("Bot could not join the Matrix room", metadata: ["error": "\(error)"])
            await setStatus(.error, detail: "the bridge bot cannot join the Matrix room: \(error)")
            return .activated(botJoined: false, resent: false)
        }
        occupants.removeAll()
        guard await joinBotOccupant() else { return .activated(botJoined: false, resent: false) }
        await loadPersistedMembership()
        do {
            let first = try await context.store.recordFirstActivation(link.matrixRoom, at: context.clock.wallNow())
            try await catchUp(firstActivation: first)
        } catch {
            logger.warning("Archive catch-up failed", metadata: ["error": "\(error)"])
        }
        await syncPuppetsWithMatrixMembers()
        return .activated(botJoined: true, resent: await resendUndelivered())
    }

    /// Joins the bridge's own occupant, taking an alternative nick on conflict. Returns whether it is joined.
    func joinBotOccupant() async -> Bool {
        for attempt in 0..<10 {
            let nick = attempt == 0 ? context.naming.botNick : "\(context.naming.botNick) \(attempt + 1)"
            do {
                switch try await context.xmpp.join(room: link.muc, nick: nick, occupant: context.naming.botOccupant) {
                case .joined(let given, let created):
                    botNick = given
                    logger.info("Joined the MUC", metadata: ["xmpp.nick": given, "xmpp.muc.created": "\(created)"])
                    return true
                case .nickConflict:
                    continue
                case .refused(let condition, let text):
                    logger.error("The MUC refused the bridge", metadata: ["xmpp.error": condition])
                    await setStatus(.error, detail: "the XMPP room refused the bridge: \(condition)\(text.map { " (\($0))" } ?? "")")
                    return false
                }
            } catch {
                logger.error("Could not join the MUC", metadata: ["error": "\(error)"])
                await setStatus(.error, detail: "cannot join the XMPP room: \(error)")
                return false
            }
        }
        await setStatus(.error, detail: "every nick tried for the bridge is taken in the XMPP room")
        return false
    }

    /// XEP-0410 §3: pings the bridge's own occupant JID. A room that silently dropped us (e.g. status 333 after the
    /// component was away) answers that we are not joined (the machine then rejoins, which also catches up from the
    /// archive). Part of the periodic self-check, after the inbox drain (with a timeline check) and the puppet sync.
    func selfPing() async -> PortalStateMachine.Input? {
        do {
            let joined = try await context.xmpp.selfPing(room: link.muc, nick: botNick, occupant: context.naming.botOccupant) == .joined
            if !joined { logger.warning("The bridge is no longer in the MUC; rejoining") }
            return .selfPinged(joined: joined)
        } catch {
            logger.debug("Self-ping failed", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Loads ghosts and puppets of this room from the store (after a restart nothing is in memory).
    func loadPersistedMembership() async {
        do {
            for puppet in try await context.store.puppets(link.matrixRoom) where puppets[puppet.user] == nil {
                var loaded = puppet
                loaded.joined = false
                puppets[puppet.user] = loaded
                displaynames[puppet.user] = displaynames[puppet.user] ?? puppet.displayname
            }
        } catch {
            logger.error("Could not load puppets", metadata: ["error": "\(error)"])
        }
    }

    /// Unlink: ghosts leave the Matrix room, puppets and the bridge's occupant leave the MUC, the bot leaves the
    /// Matrix room, and the link's state is deleted. Steps that fail are logged; the link is removed regardless.
    func unlink() async {
        logger.info("Unlinking")
        let room = link.matrixRoom
        if let ghosts = try? await context.store.roomGhosts(room) {
            for ghost in ghosts where ghost.joined {
                do {
                    try await context.matrix.leave(room, as: ghost.user, reason: "The XMPP room was unlinked")
                } catch {
                    logger.warning("Ghost could not leave", metadata: ["matrix.user.id": ghost.user.rawValue, "error": "\(error)"])
                }
            }
        }
        if xmppConnected {
            for puppet in puppets.values where puppet.joined {
                try? await context.xmpp.leave(room: link.muc, nick: puppet.nick, occupant: puppet.occupant,
                                              status: "The Matrix room was unlinked")
            }
            if botJoined {
                try? await context.xmpp.leave(room: link.muc, nick: botNick, occupant: context.naming.botOccupant,
                                              status: "The Matrix room was unlinked")
            }
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
