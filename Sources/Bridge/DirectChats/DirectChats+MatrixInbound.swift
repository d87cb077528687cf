import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// Matrix → XMPP in DMs: the DM rooms' events, queued in the durable inbox, handled in order per DM room (see
/// ``DirectChats``): for each, one store read, the ``DirectChatMachine``'s decision, and the actions it returns
/// performed here in order. Also the MUC's bounces of the private messages they became.
extension DirectChats {
    /// Handles the queued events of the DMs that belong to `linkedRoom`.
    func drain(linkedRoom: RoomID) async {
        do {
            for room in try await context.store.directRooms(of: linkedRoom) { try await drain(dm: room) }
        } catch {
            logger.error("Could not read the queued DM events", metadata: ["error": "\(error)"])
        }
    }

    /// Handles the queued events of one DM room, oldest first.
    private func drain(dm room: RoomID) async throws {
        let (queued, undecodable) = QueuedMatrixEvent.decoding(try await context.store.inbox(room))
        for row in undecodable {
            do {
                _ = try await receive(.undecodable(row))
            } catch {
                // Read, and dropped, again next time.
                logger.error("Could not drop an undecodable inbox entry", metadata: ["matrix.event.id": row.eventID.rawValue, "error": "\(error)"])
            }
        }
        await handle(queued)
    }

    /// Events just queued, room by room: one ``DirectArrivalSnapshot`` read, and what
    /// ``DirectChatMachine/arrived(_:in:_:)`` says done (they go now, or after the room's older ones, or wait for them).
    func handleArrived(_ queued: [QueuedMatrixEvent]) async {
        var rooms: [RoomID] = []
        for item in queued where !rooms.contains(item.event.room) { rooms.append(item.event.room) }
        for room in rooms {
            let items = queued.filter { $0.event.room == room }
            do {
                let snapshot = try await context.store.directArrivalSnapshot(room, from: items[0].seq)
                for action in machine.arrived(items, in: room, snapshot) {
                    switch action {
                    case .handle(let items): await handle(items)
                    case .drain(let room): try await drain(dm: room)
                    }
                }
            } catch {
                logger.error("Could not read the queued DM events", metadata: ["matrix.dm.id": room.rawValue, "error": "\(error)"])
            }
        }
    }

    private func handle(_ queued: [QueuedMatrixEvent]) async {
        // DM rooms with an event that has to wait (or failed): their later events wait too (order within a DM).
        var held: Set<RoomID> = []
        for item in queued where !held.contains(item.event.room) {
            do {
                // A drain and the live hand-over may both bring a row (the first to handle it removes it), and a
                // replayed event finds itself recorded as handled: its snapshot is then nil.
                let snapshot = try await context.durably { try await self.context.store.directEventSnapshot(item) }
                if let room = try await receive(.event(item, snapshot)) { held.insert(room) }
            } catch {
                held.insert(item.event.room)
                logger.error("Could not handle a DM event", metadata: ["matrix.event.id": item.event.eventID.rawValue, "error": "\(error)"])
            }
        }
    }

    /// Feeds `input` to the machine and performs the actions it returns in order, each outcome fed back in turn (its
    /// actions performed before the rest); stops at ``DirectChatMachine/Action/hold(_:)`` and returns its room. Throws
    /// as ``perform(_:)`` does, leaving the rest unperformed.
    private func receive(_ input: DirectChatMachine.Input) async throws -> RoomID? {
        var actions = machine.receive(input, now: context.clock.now())
        while !actions.isEmpty {
            let action = actions.removeFirst()
            if case .hold(let room) = action { return room }
            if let outcome = try await perform(action) { actions = machine.receive(outcome, now: context.clock.now()) + actions }
        }
        return nil
    }

    /// Performs one of the machine's actions; returns its outcome when the machine waits for one. Throws when the
    /// event must stay queued (the homeserver or the store failed).
    private func perform(_ action: DirectChatMachine.Action) async throws -> DirectChatMachine.Input? {
        switch action {
        case .sendPrivate(let delivery):
            do {
                try await context.xmpp.sendChat(from: delivery.from, to: delivery.to, body: delivery.body, references: delivery.references,
                                                originID: delivery.originID)
            } catch XMPPLinkError.notConnected {
                return .privateSent(delivery, connected: false)
            }
            return .privateSent(delivery, connected: true)
        case .sendCaption(let caption, let originID, let route, let room):
            return await context.xmpp.sendCaption(caption, of: originID, route, logger: logger).map { .captionSent($0, room: room) }
        case .postNotice(let notice):
            do {
                try await self.notice(notice.text, in: notice.room, as: notice.ghost, subject: notice.subject)
            } catch MatrixLinkError.notInRoom {
                return .noticeNotInRoom(notice)
            }
            return .noticePosted(notice)
        case .joinRoom(let room, let ghost):
            try await retrying { try await self.context.matrix.join(room, as: ghost) }
        case .acceptInvite(let chat, let room):
            try await acceptInvite(chat, in: room)
        case .prepareDevice(let ghost):
            guard let devices = context.ghostDevices, await !devices.isReady(ghost) else { break }
            // Registered first: a device needs its user (the join below registers it too; both repeat harmlessly).
            do {
                try await retrying { try await self.context.matrix.registerGhost(ghost) }
            } catch {
                logger.warning("Could not register a ghost for its encryption device", metadata: ["matrix.ghost.id": ghost.rawValue, "error": "\(error)"])
            }
            await devices.prepare(ghost, for: "an encrypted DM")
        case .forgetRoom(let chat, let room):
            try await context.durably { try await self.context.store.saveDirectChat(chat) }
            try? await context.matrix.leave(room, as: chat.ghost, reason: nil)
            logger.info("The Matrix user left a DM room; the next private message opens a new one",
                        metadata: ["matrix.dm.id": room.rawValue, "matrix.user.id": chat.matrixUser.rawValue])
        case .consume(let item, let mapping, let reaction):
            try await context.durably {
                try await self.context.store.consumeDirectEvent(seq: item.seq, eventID: item.event.eventID, room: item.event.room,
                                                                mapping: mapping, reaction: reaction)
            }
        case .hold:
            break   // ends the batch in receive(_:)
        case .drop(let seq):
            try await context.durably { try await self.context.store.deleteInbox(seq: seq) }
        case .readBouncedChat(let bounce, let room):
            return .bouncedChatRead(bounce, try await context.store.directChat(in: room))
        case .log(let entry):
            logger.log(entry.level, entry.message, metadata: entry.metadata)
        }
        return nil
    }

    /// The ghost joins a DM room the Matrix user opened. Throws while the homeserver is unavailable; a refusal (the
    /// invitation was withdrawn, the room is gone) is logged: nothing to wait for. With `encryption.require`, the room's
    /// own state decides, once joined (the invitation's stripped state is the inviter's server's word): an unencrypted
    /// room is left again, saying why, and the DM forgotten.
    private func acceptInvite(_ chat: DirectChat, in room: RoomID) async throws {
        do {
            try await retrying { try await self.context.matrix.registerGhost(chat.ghost) }
            try await retrying { try await self.context.matrix.join(room, as: chat.ghost) }
            if context.encryptedRooms == .required, let devices = context.ghostDevices,
               try await retrying({ try await devices.isEncrypted(room, as: chat.ghost) }) == false {
                var forgotten = chat
                forgotten.matrixRoom = nil
                try await context.durably { try await self.context.store.saveDirectChat(forgotten) }
                try? await context.matrix.leave(room, as: chat.ghost, reason: DirectChatRules.unencryptedReason)
                logger.info("A DM room that claimed to be encrypted is not; the ghost left it",
                            metadata: ["matrix.dm.id": room.rawValue, "matrix.user.id": chat.matrixUser.rawValue])
                return
            }
        } catch MatrixLinkError.unavailable(let reason) {
            throw MatrixLinkError.unavailable(reason)
        } catch {
            logger.warning("Could not join a DM room a Matrix user opened", metadata: ["matrix.dm.id": room.rawValue, "error": "\(error)"])
            return
        }
        logger.info("Joined a DM room a Matrix user opened",
                    metadata: ["matrix.room.id": chat.linkedRoom.rawValue, "matrix.dm.id": room.rawValue,
                               "matrix.user.id": chat.matrixUser.rawValue])
    }

    /// Tells the Matrix user in the DM that the MUC bounced their private message (a failure is logged: a bounce is
    /// in memory only).
    func bounced(_ bounce: DirectChatMachine.Bounce) async {
        do {
            // A bounce's notice answers no queued event: nothing holds.
            _ = try await receive(.bounced(bounce))
        } catch {
            logger.error("Could not report a bounced private message", metadata: ["xmpp.origin.id": bounce.originID.rawValue, "error": "\(error)"])
        }
    }
}
