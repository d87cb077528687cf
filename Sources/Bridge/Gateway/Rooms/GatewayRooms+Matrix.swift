import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import Matrix
import Media
import MatrixClient
import XMPP

/// What the hosted rooms ask of the homeserver, as the XMPP users' ghosts: joining (the alias resolved, its spelling
/// found when XMPP folded it), reading the room, sending what an occupant wrote, private rooms with Matrix members.
extension GatewayRooms {
    /// The ghost writes to `user` in their private room, opening one (a direct chat the ghost invites `user` to) when
    /// there is none yet.
    func sendDirect(_ room: JID, from: JID, ghost: UserID, to user: UserID, message: Message) async {
        let key = message.originID?.rawValue ?? message.id?.rawValue ?? UUID().uuidString
        do throws(MatrixError) {
            let direct: RoomID
            if let known = directRooms["\(ghost) \(user)"] {
                direct = known
            } else {
                // A new private room is an invitation to someone: counted like a join.
                guard admitJoin(of: from.bare) else {
                    await process(room, .sendRefused(from: from, message: message, StanzaError(type: .wait, condition: .resourceConstraint,
                                                                                                 text: "Too many new conversations: try again in a minute")))
                    return
                }
                direct = try await client.createRoom(CreateRoomRequest(preset: "trusted_private_chat", invite: [user], isDirect: true), as: ghost)
                try? await store.recordGatewayDirect(ghost: ghost, user: user, matrixRoom: direct, room: room)
                registerDirect(direct, ghost: ghost, user: user, room: room)
            }
            _ = try await client.sendMessage(.text(message.body ?? ""), to: direct, transactionID: .derived(fromSourceKey: "gateway pm \(from.bare) \(key)"),
                                             as: ghost)
        } catch {
            logger.info("Gateway private message refused by the homeserver", metadata: ["error": error.message])
            await process(room, .sendRefused(from: from, message: message, StanzaError(type: .cancel, condition: .serviceUnavailable, text: "The Matrix room did not take it")))
        }
    }

    func registerDirect(_ direct: RoomID, ghost: UserID, user: UserID, room: JID) {
        directs[direct] = (ghost, user)
        directRooms["\(ghost) \(user)"] = direct
        byMatrixRoom[direct] = room
    }

    /// Routes the private rooms `ghost` opened from `room` again (it joined anew, or the process restarted).
    func registerDirects(of ghost: UserID, in room: JID) async {
        for direct in (try? await store.gatewayDirects(of: ghost)) ?? [] {
            registerDirect(direct.matrixRoom, ghost: direct.ghost, user: direct.user, room: room)
        }
    }

    /// Sends what an occupant's message asks of the Matrix room, as its ghost; transaction ids derive from the message's
    /// ids (and the reaction key), so a repeated stanza is not a second event.
    func sendMatrix(_ room: JID, from: JID, ghost: UserID, matrixRoom: RoomID, message: Message,
                            _ outgoing: GatewayRoomMachine.MatrixOutgoing) async {
        let key = message.originID?.rawValue ?? message.id?.rawValue ?? UUID().uuidString
        do throws(MatrixError) {
            switch outgoing {
            case .text(let body, let replyTo):
                var content = body.hasPrefix("/me ") ? MessageContent(messageType: .emote, body: String(body.dropFirst(4))) : MessageContent.text(body)
                content.relatesTo = replyTo.map(RelatesTo.reply(to:))
                let event = try await client.sendMessage(content, to: matrixRoom, transactionID: .derived(fromSourceKey: "gateway \(from.bare) \(key)"), as: ghost)
                await process(room, .sent(from: from, message: message, event: event))
            case .file(let link, let replyTo):
                var content: MessageContent
                switch await importer?.importFile(link, as: ghost) {
                case .uploaded(let media)?:
                    content = MessageContent(messageType: media.msgtype, body: link.caption ?? media.fileName, url: media.mxc.description,
                                             fileName: media.fileName, info: media.info)
                case .declined(let reason)?:
                    logger.info("Gateway file sent as its link", metadata: ["reason": reason])
                    content = .text(message.body ?? link.url)
                case .homeserverUnavailable(let reason)?:
                    await process(room, .sendRefused(from: from, message: message, StanzaError(type: .wait, condition: .serviceUnavailable, text: reason)))
                    return
                case nil:
                    content = .text(message.body ?? link.url)
                }
                content.relatesTo = replyTo.map(RelatesTo.reply(to:))
                let event = try await client.sendMessage(content, to: matrixRoom, transactionID: .derived(fromSourceKey: "gateway \(from.bare) \(key)"), as: ghost)
                await process(room, .sent(from: from, message: message, event: event))
            case .edit(let original, let body):
                var content = MessageContent(messageType: .text, body: "* " + body, relatesTo: .replacing(original))
                content.newContent = .init(messageType: .text, body: body)
                let event = try await client.sendMessage(content, to: matrixRoom, transactionID: .derived(fromSourceKey: "gateway \(from.bare) \(key)"), as: ghost)
                await process(room, .sent(from: from, message: message, event: event))
            case .reaction(let target, let reaction):
                let event = try await client.send(ReactionContent(reactingTo: target, key: reaction), type: MatrixEventType.reaction, to: matrixRoom,
                                                  transactionID: .derived(fromSourceKey: "gateway \(from.bare) \(key) \(reaction)"), as: ghost)
                await process(room, .reacted(from: from, target: target, key: reaction, event: event))
            case .redaction(let target):
                _ = try await client.redact(target, in: matrixRoom, transactionID: .derived(fromSourceKey: "gateway \(from.bare) \(key) \(target)"), as: ghost)
            }
        } catch {
            logger.warning("Gateway message refused by the homeserver", metadata: ["matrix.room": matrixRoom.rawValue, "error": error.message])
            let condition: StanzaErrorCondition = error.errcode == .forbidden ? .forbidden : .serviceUnavailable
            await process(room, .sendRefused(from: from, message: message, StanzaError(type: .cancel, condition: condition, text: "The Matrix room did not take it")))
        }
    }

    /// The ghost joins the Matrix room the alias names, and reads it; what the machine is told of it.
    func joinMatrix(_ room: JID, user: JID, ghost: UserID, nick: String) async -> GatewayRoomMachine.Input {
        guard let address = machines[room]?.address else {
            return .joinRefused(user: user, StanzaError(type: .cancel, condition: .itemNotFound))
        }
        let matrixRoom: RoomID
        do throws(MatrixError) {
            let resolved = try await resolve(address)
            if let other = byMatrixRoom[resolved.roomID], other != room {
                // One Matrix room is one MUC here: its other address is where it is.
                return .joinRefused(user: user, StanzaError(type: .modify, condition: .redirect,
                                                            text: "This room is at xmpp:\(other)?join"))
            }
            _ = try? await client.registerGhost(ghost)
            matrixRoom = try await client.join(resolved.roomID, via: resolved.servers, as: ghost)
        } catch {
            logger.info("Gateway join refused by the homeserver", metadata: [
                "matrix.alias": address.alias.rawValue, "errcode": error.errcode?.rawValue ?? "", "error": error.message])
            return .joinRefused(user: user, Self.refusal(error))
        }
        _ = try? await client.setRoomDisplayName(nick, in: matrixRoom, for: ghost)
        let (members, topic) = await read(matrixRoom, as: ghost)
        let history = await history(of: matrixRoom, as: ghost)
        byMatrixRoom[matrixRoom] = room
        await registerDirects(of: ghost, in: room)
        logger.info("Gateway occupant joined", metadata: ["xmpp.room": room.description, "matrix.room": matrixRoom.rawValue])
        return .joined(user: user, view: .init(room: matrixRoom, members: members, topic: topic, history: history))
    }

    /// The MUC error a refused Matrix join stands for: banned or invite-only → `forbidden`, unknown alias →
    /// `item-not-found`, anything else → `service-unavailable`.
    static func refusal(_ error: MatrixError) -> StanzaError {
        if error.errcode == .forbidden { return StanzaError(type: .auth, condition: .forbidden, text: "The Matrix room does not let you in (invite-only, or banned)") }
        if error.errcode == .notFound || error.status == 404 {
            return StanzaError(type: .cancel, condition: .itemNotFound, text: "No Matrix room has this alias")
        }
        return StanzaError(type: .wait, condition: .serviceUnavailable, text: "The Matrix room cannot be reached now")
    }

    /// The room an address names, its alias spelt as the homeserver knows it: as the alias table says, else as the
    /// address spells it, else (XMPP folded it to lower case) as its server's directory shows it.
    func resolve(_ address: GatewayRoomAddress) async throws(MatrixError) -> ResolvedAlias {
        let alias = await spelling(of: address)
        do {
            return try await client.resolveAlias(alias)
        } catch {
            guard error.errcode == .notFound, let spelt = await searchSpelling(of: address), spelt != alias else { throw error }
            return try await client.resolveAlias(spelt)
        }
    }

    /// The room's members (with their per-room displaynames) and topic, as `ghost` reads them.
    func read(_ room: RoomID, as ghost: UserID) async -> (members: [UserID: String?], topic: String?) {
        struct Topic: Decodable { var topic: String? }
        let members = (try? await client.joinedMembers(of: room, as: ghost))?.mapValues(\.displayName) ?? [:]
        let topic = (try? await client.stateEvent(Topic.self, type: "m.room.topic", in: room, as: ghost))?.topic
        return (members, topic)
    }

    /// The last messages of the room as the ghost may see them, oldest first.
    func history(of room: RoomID, as ghost: UserID) async -> [GatewayRoomMachine.HistoryMessage] {
        guard let page = try? await client.roomMessages(in: room, limit: 100, as: ghost) else { return [] }
        return page.events.reversed().compactMap { event in
            guard case .message(let content) = event.content, content.relatesTo?.replacedEventID == nil else { return nil }
            return .init(event: event.eventID, sender: event.sender, body: Self.text(of: content),
                         sent: Date(timeIntervalSince1970: Double(event.originServerTS) / 1000))
        }
    }
}
