import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import XMPP
import XMPPClient
import XMPPComponent

/// The production ``XMPPLink``: MUC occupant operations over an XMPP session — the XEP-0114 component connection, or
/// in client mode the bridge's own account (``ClientConnection``) — and the translation of its stanza stream into
/// the bridge's room events.
///
/// ``events`` is a view of the connection's event stream that translates each event where it is consumed (by the
/// bridge's XMPP task): no pump task and no second stream between the socket and the portals. IQ requests to our JIDs
/// are answered there as they pass (`ComponentIQResponder`: vCards, pings, errors); other stanzas that are not about
/// a room (IQ answers nobody waits for, presences not from a room or one of its occupants) are dropped there, and so
/// are the copies of room traffic addressed to our other occupants when a `primaryOccupant` is given (see
/// ``init(connection:logger:primaryOccupant:)``).
public final class SessionXMPPLink: XMPPLink {
    let connection: any StanzaSession
    /// The puppets' avatars: what their vCards answer and their presences announce (XEP-0153).
    let avatars = PuppetAvatars()
    /// The bridge's view of the XMPP side, in arrival order. Consume from one task (it is the connection's stream).
    public let events: Events
    private let logger: Logger

    /// `primaryOccupant`: the one occupant whose copy of room traffic the bridge acts on (its own). A room sends every
    /// message and presence to each occupant the component hosts; with it set, the other copies of groupchat messages
    /// and of presences are dropped here instead of travelling to the portal, which drops them too (message errors are
    /// kept: they report our own messages' failures). In a room with 500 Matrix users that is 500 of every 501
    /// stanzas. nil: everything goes on.
    /// `gatewayDomain`: the component's domain when it hosts rooms for XMPP users (gateway mode): stanzas to
    /// `#…@gatewayDomain` then reach the bridge as ``XMPPLinkEvent/gateway(_:)``, IQ requests included.
    public init(connection: ComponentConnection, logger: Logger, primaryOccupant: JID? = nil, gatewayDomain: String? = nil) {
        self.connection = connection
        self.logger = logger
        events = Events(source: .component(connection.events), primaryOccupant: primaryOccupant,
                        responder: ComponentIQResponder(connection: connection, avatars: avatars), gatewayDomain: gatewayDomain)
    }

    /// Client mode: the account is the bridge's one occupant, and every stanza it takes counts as handled in the
    /// session's XEP-0198 acks.
    public init(client: ClientConnection, logger: Logger) {
        connection = client
        self.logger = logger
        events = Events(source: .client(client.events, client), primaryOccupant: nil,
                        responder: ComponentIQResponder(connection: client, avatars: avatars))
    }

    public func roomFeatures(room: JID, as occupant: JID) async throws -> RoomFeatures {
        do {
            let info = try await connection.discoInfo(of: room.bare, as: occupant)
            let features = Set(info.features)
            let moderation: ModerationRequest.Version? = features.contains(XMPPNamespace.moderation) ? .current
                : features.contains(XMPPNamespace.moderationLegacy) ? .legacy : nil
            var room = RoomFeatures(stanzaIDs: features.contains(XMPPNamespace.stanzaID), archive: features.contains(XMPPNamespace.mam),
                                    moderation: moderation, name: info.roomName, avatar: info.roomAvatar)
            room.isRoom = info.isRoom
            room.entry = info.isPasswordProtected ? .passwordProtected : info.isMembersOnly ? .membersOnly : .open
            room.subject = info.roomSubject
            return room
        } catch {
            throw Self.linkError(error)
        }
    }

    public func send(_ stanza: Stanza) async throws {
        do {
            try await connection.send(stanza)
        } catch {
            throw Self.linkError(error)
        }
    }

    public func setSubject(room: JID, subject: String, from occupant: JID, id: OriginID) async throws {
        do {
            try await connection.send(.message(Message(type: .groupchat, from: occupant, to: room.bare,
                                                       id: StanzaAttributeID(id.rawValue), subject: subject)))
        } catch {
            throw Self.linkError(error)
        }
    }

    public func answerSubscription(of requester: JID, accepted: Bool) async throws {
        do {
            try await connection.send(.presence(Presence(type: accepted ? .subscribed : .unsubscribed, to: requester.bare)))
        } catch {
            throw Self.linkError(error)
        }
    }

    public func setReadingPaused(_ paused: Bool) async {
        if paused { await connection.pauseReading() } else { await connection.resumeReading() }
    }

    public func join(room: JID, nick: String, occupant: JID) async throws -> JoinOutcome {
        do {
            return try await connection.join(room: room, nick: nick, occupant: occupant,
                                             extensions: [avatars.presenceUpdate(puppet: occupant, room: room)])
        } catch {
            throw Self.linkError(error)
        }
    }

    public func leave(room: JID, nick: String, occupant: JID, status: String?) async throws {
        do {
            _ = try await connection.leave(room: room, nick: nick, occupant: occupant, status: status, timeout: .seconds(5))
        } catch {
            throw Self.linkError(error)
        }
    }

    public func changeNick(room: JID, to nick: String, occupant: JID) async throws -> NickChangeOutcome {
        do {
            return try await connection.changeNick(room: room, to: nick, occupant: occupant,
                                                   extensions: [avatars.presenceUpdate(puppet: occupant, room: room)])
        } catch {
            throw Self.linkError(error)
        }
    }

    public func sendGroupchat(room: JID, from occupant: JID, body: String?, references: MessageReferences,
                              originID: OriginID) async throws {
        do {
            await connection.awaitSendCapacity()
            // XEP-0085 §5.1: a message with a body carries <active/>, so clients stop showing the sender as typing.
            try await connection.sendGroupchat(from: occupant, room: room, body: body, originID: originID,
                                               extensions: references.elements + (body == nil ? [] : Self.active))
        } catch {
            throw Self.linkError(error)
        }
    }

    public func moderate(room: JID, _ request: ModerationRequest, as occupant: JID) async throws {
        try await set(request.element, in: room, as: occupant)
    }

    public func sendPrivate(from sender: JID, to recipient: JID, body: String) async throws {
        do {
            try await connection.send(.message(Message(type: .chat, from: sender, to: recipient, body: body)))
        } catch {
            throw Self.linkError(error)
        }
    }

    public func sendChat(from occupant: JID, to recipient: JID, body: String?, references: MessageReferences,
                         originID: OriginID) async throws {
        do {
            await connection.awaitSendCapacity()
            try await connection.sendGroupchat(from: occupant, room: recipient, body: body, originID: originID,
                                               extensions: references.elements + [XElement("x", namespace: XMPPNamespace.mucUser)],
                                               type: .chat)
        } catch {
            throw Self.linkError(error)
        }
    }

    public func sendInvite(room: JID, from sender: JID, to invitee: JID, reason: String?, id: OriginID) async throws {
        do {
            let invite = MUCInvite(to: invitee, reason: reason)
            try await connection.send(.message(Message(from: sender, to: room.bare, id: StanzaAttributeID(id.rawValue),
                                                       mucUser: invite.mucUser)))
        } catch {
            throw Self.linkError(error)
        }
    }

    public func setRole(room: JID, nick: String, role: MUCRole, as occupant: JID) async throws {
        try await adminSet(room: room, MUCItem(role: role, nick: nick), as: occupant)
    }

    public func setAffiliation(room: JID, of jid: JID, to affiliation: MUCAffiliation, as actor: JID) async throws {
        try await adminSet(room: room, MUCItem(affiliation: affiliation, jid: jid.bare), as: actor)
    }

    public func affiliated(room: JID, _ affiliation: MUCAffiliation, as occupant: JID) async throws -> [JID] {
        let query = XElement("query", namespace: XMPPNamespace.mucAdmin,
                             children: [.element(MUCItem(affiliation: affiliation).element(namespace: XMPPNamespace.mucAdmin))])
        let response = try await request(.get, query, in: room, as: occupant)
        guard case .other(let answer)? = response.payload else { return [] }
        return answer.children("item", namespace: XMPPNamespace.mucAdmin).compactMap { try? MUCItem(element: $0).jid?.bare }
    }

    /// One `muc#admin` set of `item` (XEP-0045 §9–10), asked by `actor`; an error answer throws ``XMPPLinkError/stanzaError(_:)``.
    private func adminSet(room: JID, _ item: MUCItem, as actor: JID) async throws {
        let query = XElement("query", namespace: XMPPNamespace.mucAdmin,
                             children: [.element(item.element(namespace: XMPPNamespace.mucAdmin))])
        try await set(query, in: room, as: actor)
    }

    /// An IQ set of `payload` to `room` from `actor`; the room's refusal is thrown as ``XMPPLinkError/stanzaError(_:)``.
    private func set(_ payload: XElement, in room: JID, as actor: JID) async throws {
        _ = try await request(.set, payload, in: room, as: actor)
    }

    /// An IQ of `type` with `payload` to `room` from `actor`, its answer; the room's refusal is thrown as
    /// ``XMPPLinkError/stanzaError(_:)``, a link failure as the link's error.
    private func request(_ type: IQ.IQType, _ payload: XElement, in room: JID, as actor: JID) async throws -> IQ {
        let response: IQ
        do {
            response = try await connection.sendIQ(IQ(type: type, from: actor, to: room.bare, payload: .other(payload)))
        } catch {
            throw Self.linkError(error)
        }
        if let error = response.error {
            throw XMPPLinkError.stanzaError(StanzaErrorInfo(condition: error.condition, text: error.text))
        }
        return response
    }

    public func sendSignals(room: JID, from occupant: JID, _ signals: ChatSignals) async throws {
        do {
            try await connection.send(.message(Message(type: .groupchat, from: occupant, to: room.bare, id: .random(),
                                                       extensions: signals.elements)))
        } catch {
            throw Self.linkError(error)
        }
    }

    public func selfPing(room: JID, nick: String, occupant: JID) async throws -> SelfPingOutcome {
        do {
            return try await connection.selfPing(room: room, nick: nick, occupant: occupant)
        } catch {
            throw Self.linkError(error)
        }
    }

    public func archive(room: JID, as occupant: JID, after: StanzaID?, since: Date?) async throws -> [RoomMessage] {
        let archived: [ArchivedMessage]
        do {
            archived = try await connection.mamQuery(room: room, as: occupant, after: after, since: since)
        } catch XMPPRequestError.requestFailed(let error) where after != nil && error.condition == .itemNotFound {
            // The archive no longer knows our last id (expired): fall back to the last day.
            logger.warning("Archive does not know the last stanza-id; catching up by time", metadata: ["xmpp.muc": room.description])
            archived = try await connection.mamQuery(room: room, as: occupant, since: connection.sessionClock.wallNow().addingTimeInterval(-86_400))
        } catch {
            throw Self.linkError(error)
        }
        return archived.compactMap { entry in
            var message = SessionXMPPLink.roomMessage(entry.message, archive: entry.archive)
            message?.stanzaID = entry.id
            message?.fromArchive = true
            return message
        }
    }

    public func fetchVCard(of target: JID, as asker: JID) async throws -> XElement? {
        do {
            let response = try await connection.sendIQ(IQ(type: .get, from: asker, to: target, payload: .other(VCardPhoto.request)),
                                                       timeout: .seconds(15))
            guard response.type == .result, case .other(let vCard)? = response.payload else { return nil }
            return vCard
        } catch {
            throw Self.linkError(error)
        }
    }

    public func setPuppetAvatar(_ avatar: StoredAvatar?, occupant: JID, room: JID, nick: String?) async throws {
        avatars.set(avatar, puppet: occupant, room: room)
        guard let nick, let to = room.bare.with(resource: nick) else { return }
        do {
            try await connection.send(.presence(Presence(from: occupant, to: to,
                                                         extensions: [avatars.presenceUpdate(puppet: occupant, room: room)])))
        } catch {
            throw Self.linkError(error)
        }
    }

    /// The chat state on every message with a body.
    private static let active = ChatSignals(chatState: .active).elements

    /// Maps the connection's errors onto the ones the bridge acts on.
    static func linkError(_ error: any Error) -> any Error {
        switch error {
        case let error as XMPPRequestError:
            switch error {
            case .timeout: return XMPPLinkError.timeout
            case .requestFailed(let stanzaError):
                return XMPPLinkError.stanzaError(StanzaErrorInfo(condition: stanzaError.condition, text: stanzaError.text))
            default: return error
            }
        case let error as ComponentError:
            switch error {
            case .notConnected, .connectionLost, .closedByServer, .connectionRefused, .connectionFailed: return XMPPLinkError.notConnected
            case .timeout: return XMPPLinkError.timeout
            default: return error
            }
        case let error as ClientError:
            switch error {
            case .notConnected, .connectionLost, .closedByServer: return XMPPLinkError.notConnected
            default: return error
            }
        default:
            return error
        }
    }
}
