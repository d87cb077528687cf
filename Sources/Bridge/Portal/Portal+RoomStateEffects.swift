import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The room-state actions (subject ↔ topic, name, upgrades) decided by ``PortalStateMachine`` (`+RoomState`,
/// `+Upgrade`). Runs on the portal's actor; I/O only (the machine chose each sender and id).
extension Portal {
    func setMatrixTopic(_ change: PortalStateMachine.TopicChange) async -> PortalStateMachine.Input {
        do {
            try await context.matrix.setTopic(change.text, in: link.matrixRoom, as: change.actor)
            return .topicSet(change, nil)
        } catch {
            return .topicSet(change, Self.matrixFailure(error))
        }
    }

    /// Sets the Matrix room's name as the bot, then records it as the name bridged.
    func setMatrixRoomName(_ name: String) async {
        let room = link.matrixRoom
        do {
            try await context.matrix.setRoomName(name, in: room)
            try await context.durably { try await context.store.setKnownRoomName(room, name) }
        } catch {
            logger.warning("Could not set the Matrix room's name", metadata: ["error": "\(Self.describe(error))"])
        }
    }

    func recordSubject(_ subject: String) async {
        let room = link.matrixRoom
        do {
            try await context.durably { try await context.store.setKnownSubject(room, subject) }
        } catch {
            logger.error("Could not record the room's subject", metadata: ["error": "\(error)"])
        }
    }

    /// Records the destruction with the link (status `error`, `detail`) so no later start joins the MUC again.
    func recordDestruction(detail: String) async {
        let room = link.matrixRoom
        do {
            try await context.durably { try await context.store.markRoomLinkDestroyed(room, detail: detail) }
        } catch {
            logger.error("Could not record the MUC's destruction", metadata: ["error": "\(error)"])
        }
        context.notify(.status(room, .error))
    }

    /// Sends the subject change from `occupant` (the user's puppet, or the bridge's occupant for its retry).
    func sendSubject(_ change: PortalStateMachine.SubjectChange, from occupant: JID) async -> PortalStateMachine.Input {
        do {
            try await context.xmpp.setSubject(room: link.muc, subject: change.text, from: occupant, id: change.id)
            return .subjectSent(change, nil)
        } catch {
            return .subjectSent(change, Self.xmppFailure(error))
        }
    }

    func announceInMUC(_ text: String, originID: OriginID) async {
        do {
            try await context.xmpp.sendGroupchat(room: link.muc, from: context.naming.botOccupant, body: text,
                                                 references: MessageReferences(), originID: originID)
        } catch {
            logger.warning("Could not post in the MUC", metadata: ["error": "\(Self.describe(error))"])
        }
    }

    func joinReplacementRoom(_ upgrade: PortalStateMachine.RoomUpgrade) async -> PortalStateMachine.Input {
        do {
            let predecessor = try await context.matrix.joinReplacement(upgrade.replacement, via: upgrade.via)
            return .replacementJoined(upgrade, predecessor: predecessor, nil)
        } catch {
            return .replacementJoined(upgrade, predecessor: nil, Self.matrixFailure(error))
        }
    }

    func moveLink(_ upgrade: PortalStateMachine.RoomUpgrade) async -> PortalStateMachine.Input {
        let (old, new) = (link.matrixRoom, upgrade.replacement)
        do {
            _ = try await context.durably { try await context.store.moveRoomLink(from: old, to: new) }
            return .linkMoved(upgrade, moved: true)
        } catch {
            logger.error("Could not move the link to the replacement room", metadata: ["error": "\(error)"])
            return .linkMoved(upgrade, moved: false)
        }
    }

    /// Ghosts and the bot leave the old room (best effort: the link has moved), then the bridge loads the new portal.
    func finishUpgrade(_ upgrade: PortalStateMachine.RoomUpgrade, ghosts: [UserID]) async {
        let room = link.matrixRoom
        for ghost in ghosts {
            do {
                try await context.matrix.leave(room, as: ghost, reason: "The room was upgraded")
            } catch {
                logger.warning("Ghost could not leave the upgraded room", metadata: ["matrix.user.id": ghost.rawValue, "error": "\(error)"])
            }
        }
        do {
            try await context.matrix.leave(room, as: context.matrix.botUserID, reason: "The room was upgraded")
        } catch {
            logger.warning("Bot could not leave the upgraded room", metadata: ["error": "\(error)"])
        }
        context.notify(.moved(from: room))
    }

    /// A Matrix call's failure in the machine's terms.
    static func matrixFailure(_ error: any Error) -> PortalStateMachine.MatrixFailure {
        if case MatrixLinkError.unavailable(let reason)? = error as? MatrixLinkError { return .unavailable(reason) }
        return .refused(describe(error))
    }
}
