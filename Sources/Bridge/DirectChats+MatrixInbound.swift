import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// Matrix → XMPP in DMs: the DM rooms' events, queued in the durable inbox, handled in order per DM room (see
/// ``DirectChats``), and the MUC's bounces of the private messages they became.
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
        await context.drop(undecodable: undecodable, logger: logger)
        await handle(queued)
    }

    /// Events just queued. Where older events of the same DM still wait in the store (its linked room was not active,
    /// or one failed), these must not overtake them — an edit, reaction or redaction of a message not sent yet would
    /// find nothing to refer to — so the DM is drained from the store in order, or, while its linked room is not
    /// active, left to the drain that comes when it is.
    func handleArrived(_ queued: [QueuedMatrixEvent]) async {
        var rooms: [RoomID] = []
        for item in queued where !rooms.contains(item.event.room) { rooms.append(item.event.room) }
        for room in rooms {
            let items = queued.filter { $0.event.room == room }
            do {
                guard try await context.store.hasInbox(room, before: items[0].seq) else {
                    await handle(items)
                    continue
                }
                if let chat = try await context.store.directChat(in: room), try await waits(chat) { continue }
                try await drain(dm: room)
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
                // replayed event finds itself recorded as handled.
                guard try await context.durably({ try await self.context.store.isDirectEventPending(seq: item.seq, eventID: item.event.eventID) })
                else { continue }
                guard let handled = try await handle(item.event) else {
                    held.insert(item.event.room)
                    continue
                }
                try await context.durably {
                    try await self.context.store.consumeDirectEvent(seq: item.seq, eventID: item.event.eventID, room: item.event.room,
                                                                    mapping: handled.mapping, reaction: handled.reaction)
                }
            } catch {
                held.insert(item.event.room)
                logger.error("Could not handle a DM event", metadata: ["matrix.event.id": item.event.eventID.rawValue, "error": "\(error)"])
            }
        }
    }

    /// Whether `chat`'s events wait for its linked room: linked, and its portal not active (XMPP down, or its puppets
    /// not back in the MUC yet). An unlinked room's DM does not wait: nothing would ever carry its events.
    private func waits(_ chat: DirectChat) async throws -> Bool {
        guard !activeRooms.contains(chat.linkedRoom) else { return false }
        return try await !context.store.linkedRooms(among: [chat.linkedRoom]).isEmpty
    }

    /// A DM event handled: what it sent, to map with its consumption (nil: it sent nothing).
    private struct Handled {
        var mapping: MessageMapping?
        var reaction: ReactionChange?
        static let nothing = Handled()
    }

    /// Handles one DM event; nil when it must wait (its linked room is not active, or XMPP is not connected): it
    /// stays queued in the store for the drain when the room is active again.
    private func handle(_ event: MatrixRoomEvent) async throws -> Handled? {
        guard let chat = try await context.store.directChat(in: event.room) else { return .nothing }
        let occupant = try await context.store.roomGhost(chat.ghost, in: chat.linkedRoom)
        let targets = try await context.store.matrixTargets(of: event, in: event.room)
        // The user's occupant nick, for the quote of a reply to her own message (read only then).
        let userNick = targets.reply?.direction == .matrixToXMPP
            ? try await context.store.puppets(chat.linkedRoom).first { $0.user == chat.matrixUser }?.nick : nil
        let step = DirectChatRules.step(for: event, chat: chat, occupant: occupant, targets: targets, userNick: userNick,
                                        mediaLinks: context.media?.signer)
        switch step {
        case .sendPrivate, .sendFile, .notice:
            guard !activeRooms.contains(chat.linkedRoom) else { break }
            guard try await !waits(chat) else { return nil }
            // Unlinked: nothing will carry it any more; say so rather than keep it forever.
            try await notice("⚠️ This conversation is no longer bridged to XMPP; the message was not delivered.", in: chat,
                             subject: "dm:\(event.eventID.rawValue)")
            return .nothing
        case .ignore, .forgetRoom, .acceptInvite, .encrypted:
            break
        }
        switch step {
        case .ignore:
            return .nothing
        case .encrypted:
            // Needs the homeserver only: told at once, whatever the XMPP side's state.
            guard let notice = encryptedNotices.notice(for: event, in: .directChat, now: context.clock.now()) else {
                encryptedNotices.record(event, noticed: false, now: context.clock.now())
                return .nothing
            }
            logger.info("An encrypted Matrix event in a DM was not bridged; the DM is told",
                        metadata: ["matrix.event.id": event.eventID.rawValue, "matrix.encrypted.held_back": "\(notice.heldBack)"])
            try await self.notice(notice.text, in: chat, subject: notice.subject)   // a failure keeps the event queued
            encryptedNotices.record(event, noticed: true, now: context.clock.now())
            return .nothing
        case .sendPrivate(let to, let send):
            guard try await sendPrivate(send.stanza.body, references: send.stanza.references, to: to, for: event, of: chat) else { return nil }
            return Handled(mapping: mapping(of: event, in: chat, kind: send.kind, target: send.target, excerpt: send.excerpt),
                           reaction: send.reaction)
        case .sendFile(let to, let file, let caption):
            guard try await sendPrivate(file.url, references: MessageReferences(file: file), to: to, for: event, of: chat) else { return nil }
            let sent = Handled(mapping: mapping(of: event, in: chat, kind: .message, target: nil, excerpt: nil))
            // The caption right behind it, as in rooms (a client shows a file only when the body is its URL alone).
            guard let caption, let from = context.naming.puppetJID(for: chat.matrixUser) else { return sent }
            let originID = context.naming.privateOriginID(for: event.eventID)
            if let captionID = await context.xmpp.sendCaption(caption, of: originID, .chat(from: from, to: to), logger: logger) {
                remember(captionID, in: event.room)
            }
            return sent
        case .notice(let text):
            try await notice(text, in: chat, subject: "dm:\(event.eventID.rawValue)")
            return .nothing
        case .acceptInvite:
            do {
                try await retrying { try await self.context.matrix.registerGhost(chat.ghost) }
                try await retrying { try await self.context.matrix.join(event.room, as: chat.ghost) }
            } catch let error as MatrixLinkError {
                throw error
            } catch {
                // Refused (the invitation was withdrawn, the room is gone): nothing to wait for.
                logger.warning("Could not join a DM room a Matrix user opened",
                               metadata: ["matrix.dm.id": event.room.rawValue, "error": "\(error)"])
                return .nothing
            }
            logger.info("Joined a DM room a Matrix user opened",
                        metadata: ["matrix.room.id": chat.linkedRoom.rawValue, "matrix.dm.id": event.room.rawValue,
                                   "matrix.user.id": chat.matrixUser.rawValue])
            return .nothing
        case .forgetRoom:
            var forgotten = chat
            forgotten.matrixRoom = nil
            try await context.durably { try await self.context.store.saveDirectChat(forgotten) }
            try? await context.matrix.leave(event.room, as: chat.ghost, reason: nil)
            logger.info("The Matrix user left a DM room; the next private message opens a new one",
                        metadata: ["matrix.dm.id": event.room.rawValue, "matrix.user.id": chat.matrixUser.rawValue])
            return .nothing
        }
    }

    /// The message map row of the private message `event` went out as (delivered: a private message has no
    /// reflection to wait for): edits, reactions and retractions in the DM find it, and an XMPP user's by its id.
    private func mapping(of event: MatrixRoomEvent, in chat: DirectChat, kind: MessageMapping.Kind, target: EventID?,
                         excerpt: String?) -> MessageMapping {
        let originID = context.naming.privateOriginID(for: event.eventID)
        return MessageMapping(room: event.room, eventID: event.eventID, stanzaID: nil, originID: originID, direction: .matrixToXMPP,
                              sender: .matrix(chat.matrixUser), state: .delivered, kind: kind,
                              xmppID: MessageIDAttribute(originID.rawValue), target: target, excerpt: excerpt)
    }

    func bounced(_ originID: OriginID, nick: String, error: StanzaErrorInfo) async {
        guard let room = recentlySent.last(where: { $0.0 == originID })?.1 else {
            logger.notice("A private message bounced that the bridge no longer places", metadata: ["xmpp.origin.id": originID.rawValue])
            return
        }
        do {
            guard let chat = try await context.store.directChat(in: room) else { return }
            try await notice(DirectChatRules.bounceNotice(nick: nick, error: error), in: chat, subject: "bounce:\(originID.rawValue)")
        } catch {
            logger.error("Could not report a bounced private message", metadata: ["matrix.dm.id": room.rawValue, "error": "\(error)"])
        }
    }

    /// Sends `event` as a private message from the Matrix user's occupant (its origin-id derived from the event, so a
    /// repeat after a crash carries the same); false when XMPP is not connected (the event waits).
    private func sendPrivate(_ body: String?, references: MessageReferences, to: JID, for event: MatrixRoomEvent,
                             of chat: DirectChat) async throws -> Bool {
        guard let from = context.naming.puppetJID(for: chat.matrixUser) else { return true }
        let originID = context.naming.privateOriginID(for: event.eventID)
        do {
            try await context.xmpp.sendChat(from: from, to: to, body: body, references: references, originID: originID)
        } catch XMPPLinkError.notConnected {
            logger.notice("XMPP is not connected; the DM message waits", metadata: ["matrix.event.id": event.eventID.rawValue])
            return false
        }
        remember(originID, in: event.room)
        return true
    }
}
