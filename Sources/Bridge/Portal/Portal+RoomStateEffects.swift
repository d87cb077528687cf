import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The room-state actions (subject ↔ topic, name, room avatar, upgrades, bridge-info state, destruction) decided by
/// ``RoomStateMachine``. Runs on the portal's actor; I/O only (the machine chose each sender and id).
extension Portal {
    /// Performs one action of the room-state sub-machine; returns its outcome when the machine waits for one.
    func performRoomState(_ action: RoomStateMachine.Action) async -> PortalStateMachine.Input? {
        switch action {
        case .setMatrixTopic(let change): return .roomState(await setMatrixTopic(change))
        case .setMatrixRoomName(let name): await setMatrixRoomName(name)
        case .recordSubject(let subject): await recordSubject(subject)
        case .recordDestruction(let detail): await recordDestruction(detail: detail)
        case .sendSubject(let change, let occupant): return .roomState(await sendSubject(change, from: occupant))
        case .announceInMUC(let text, let originID): await announceInMUC(text, originID: originID)
        case .joinReplacementRoom(let upgrade): return .roomState(await joinReplacementRoom(upgrade))
        case .moveLink(let upgrade): return .roomState(await moveLink(upgrade))
        case .finishUpgrade(let upgrade, let ghosts): await finishUpgrade(upgrade, ghosts: ghosts)
        case .setMatrixRoomAvatar(let change): enqueue(.roomAvatarSet(change, await setMatrixRoomAvatar(change)))
        case .setBridgeInfo(let info): await setBridgeInfo(info)
        case .postNotice(let text, let subject): await postNotice(text, subject: subject)
        case .dequeue(let seq): await dequeue(seq: seq)
        case .log(let entry): logger.log(entry.level, entry.message, metadata: entry.metadata)
        }
        return nil
    }

    private func setMatrixTopic(_ change: RoomStateMachine.TopicChange) async -> RoomStateMachine.Input {
        do {
            try await context.matrix.setTopic(change.text, in: link.matrixRoom, as: change.actor)
            return .topicSet(change, nil)
        } catch {
            return .topicSet(change, Self.matrixFailure(error))
        }
    }

    /// Sets the Matrix room's name as the bot, then records it as the name bridged.
    private func setMatrixRoomName(_ name: String) async {
        let room = link.matrixRoom
        do {
            try await context.matrix.setRoomName(name, in: room)
            try await context.durably { try await context.store.setKnownRoomName(room, name) }
        } catch {
            logger.warning("Could not set the Matrix room's name", metadata: ["error": "\(Self.describe(error))"])
        }
    }

    private func recordSubject(_ subject: String) async {
        let room = link.matrixRoom
        do {
            try await context.durably { try await context.store.setKnownSubject(room, subject) }
        } catch {
            logger.error("Could not record the room's subject", metadata: ["error": "\(error)"])
        }
    }

    /// Records the destruction with the link (status `error`, `detail`) so no later start joins the MUC again.
    private func recordDestruction(detail: String) async {
        let room = link.matrixRoom
        do {
            try await context.durably { try await context.store.markRoomLinkDestroyed(room, detail: detail) }
        } catch {
            logger.error("Could not record the MUC's destruction", metadata: ["error": "\(error)"])
        }
        context.notify(.status(room, .error))
    }

    /// Sends the subject change from `occupant` (the user's puppet, or the bridge's occupant for its retry).
    private func sendSubject(_ change: RoomStateMachine.SubjectChange, from occupant: JID) async -> RoomStateMachine.Input {
        do {
            try await context.xmpp.setSubject(room: link.muc, subject: change.text, from: occupant, id: change.id)
            return .subjectSent(change, nil)
        } catch {
            return .subjectSent(change, Self.xmppFailure(error))
        }
    }

    private func announceInMUC(_ text: String, originID: OriginID) async {
        do {
            try await context.xmpp.sendGroupchat(room: link.muc, from: context.naming.botOccupant, body: text,
                                                 references: MessageReferences(), originID: originID)
        } catch {
            logger.warning("Could not post in the MUC", metadata: ["error": "\(Self.describe(error))"])
        }
    }

    private func joinReplacementRoom(_ upgrade: RoomStateMachine.RoomUpgrade) async -> RoomStateMachine.Input {
        do {
            let predecessor = try await context.matrix.joinReplacement(upgrade.replacement, via: upgrade.via)
            return .replacementJoined(upgrade, predecessor: predecessor, nil)
        } catch {
            return .replacementJoined(upgrade, predecessor: nil, Self.matrixFailure(error))
        }
    }

    private func moveLink(_ upgrade: RoomStateMachine.RoomUpgrade) async -> RoomStateMachine.Input {
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
    private func finishUpgrade(_ upgrade: RoomStateMachine.RoomUpgrade, ghosts: [UserID]) async {
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
