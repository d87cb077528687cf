import Foundation
import IsthmusCommon
import IsthmusStore

extension Portal {
    /// Whether `user` is a Matrix user the bridge mirrors (not the bot, not one of our ghosts).
    func isBridgedMatrixUser(_ user: UserID) -> Bool {
        user != context.matrix.botUserID && !context.matrix.isGhost(user)
    }

    /// Makes sure `user` has an occupant in the MUC and returns it. The nick is the user's displayname (else the
    /// localpart); on conflict a deterministic alternative (`Name (Matrix)`, then numbered) is kept until the
    /// displayname changes. Never sends under someone else's nick: the MUC assigns nicks uniquely.
    @discardableResult
    func ensurePuppet(_ user: UserID) async throws -> Puppet {
        let displayname = displaynames[user] ?? user.localpart
        if let puppet = puppets[user], puppet.joined, puppet.displayname == displayname { return puppet }
        guard xmppConnected else { throw XMPPLinkError.notConnected }
        guard let occupant = context.naming.puppetJID(for: user) else {
            throw BridgeError.unrepresentable("no JID for \(user)")
        }
        let previous = puppets[user]
        // Keep the alternative nick we already hold when the displayname did not change (no churn after restarts).
        let startAttempt = (previous?.displayname == displayname) ? attemptIndex(of: previous?.nick, for: displayname) : 0
        for attempt in startAttempt..<(startAttempt + 10) {
            let nick = context.naming.nick(for: displayname, attempt: attempt)
            let result: MUCJoinResult
            if let previous, previous.joined, previous.nick != nick {
                result = try await context.xmpp.changeNick(room: link.muc, to: nick, occupant: occupant)
            } else {
                result = try await context.xmpp.join(room: link.muc, nick: nick, occupant: occupant)
            }
            switch result {
            case .joined(let given, _):
                let puppet = Puppet(room: link.matrixRoom, user: user, occupant: occupant, nick: given, displayname: displayname,
                                    joined: true)
                puppets[user] = puppet
                try await context.store.savePuppet(puppet)
                logger.debug("Puppet joined", metadata: ["matrix.user.id": user.rawValue, "xmpp.nick": given])
                return puppet
            case .nickConflict:
                logger.info("Nick taken; trying an alternative", metadata: ["matrix.user.id": user.rawValue, "xmpp.nick": nick])
                continue
            case .refused(let condition, let text):
                throw XMPPLinkError.stanzaError(StanzaErrorInfo(condition: condition, text: text))
            }
        }
        throw BridgeError.unrepresentable("every nick tried for \(user) is taken")
    }

    private func attemptIndex(of nick: String?, for displayname: String) -> Int {
        guard let nick else { return 0 }
        for attempt in 0..<20 where context.naming.nick(for: displayname, attempt: attempt) == nick { return attempt }
        return 0
    }

    /// Sends `body` to the MUC as `user`'s occupant, joining it first if needed.
    func sendAsPuppet(_ user: UserID, body: String, originID: OriginID) async throws {
        let puppet = try await ensurePuppet(user)
        try await context.xmpp.sendGroupchat(room: link.muc, from: puppet.occupant, body: body, originID: originID)
    }

    /// Makes the MUC's Matrix-side occupants match the Matrix room's joined members: missing puppets join
    /// (with their stored nicks after a restart), puppets of users who left the room leave.
    func syncPuppetsWithMatrixMembers() async {
        let members: [UserID: String?]
        do {
            members = try await context.matrix.joinedMembers(link.matrixRoom)
        } catch {
            logger.error("Could not list Matrix members", metadata: ["error": "\(error)"])
            return
        }
        for (user, name) in members where isBridgedMatrixUser(user) {
            if let name, !name.isEmpty { displaynames[user] = name }
        }
        for user in members.keys.sorted(by: { $0.rawValue < $1.rawValue }) where isBridgedMatrixUser(user) {
            do {
                try await ensurePuppet(user)
            } catch {
                logger.warning("Puppet could not join", metadata: ["matrix.user.id": user.rawValue, "error": "\(error)"])
                if case XMPPLinkError.notConnected = error { return }
            }
        }
        for (user, puppet) in puppets where members[user] == nil {
            await removePuppet(puppet, status: nil)
        }
    }

    /// `user`'s occupant leaves the MUC (with a status text saying why, for kicks and bans) and is forgotten.
    func removePuppet(_ puppet: Puppet, status: String?) async {
        if puppet.joined, xmppConnected {
            do {
                try await context.xmpp.leave(room: link.muc, nick: puppet.nick, occupant: puppet.occupant, status: status)
            } catch {
                logger.warning("Puppet could not leave", metadata: ["matrix.user.id": puppet.user.rawValue, "error": "\(error)"])
            }
        }
        puppets[puppet.user] = nil
        try? await context.store.deletePuppet(room: link.matrixRoom, user: puppet.user)
    }
}

/// Bridge-level failures that are not the links' own errors.
enum BridgeError: Error, Sendable, Equatable {
    /// Something cannot be expressed on the other side (no valid JID or nick for it).
    case unrepresentable(String)
}
