import FoundationEssentials
import IsthmusCommon
import XMLStream

/// XEP-0045 occupant operations for any of the session's JIDs (a Matrix user's puppet or the bridge bot under the
/// component; the client's account). On the session's actor; each sends stanzas and waits for the room's answer,
/// except ``sendGroupchat(from:room:body:originID:extensions:type:)``, which only writes.
extension StanzaSession {
    /// Joins `room` as `nick` on behalf of `occupant` (XEP-0045 §7.2), asking for `history` (default none: catch
    /// up through MAM instead). Waits for our self-presence or a presence error. When the join created the room
    /// (status 201, §10.1), configures it (archiving on where the server offers it) before reporting joined.
    ///
    /// Presences of other occupants that arrive meanwhile go on to ``events`` as usual. `extensions` are added to the
    /// join presence (e.g. a XEP-0153 avatar hash).
    /// - Throws: the link's error (not connected), ``XMPPRequestError`` (timeout, the room refusing the instant-room form) or
    ///   `CancellationError`. A refusal of the join itself is an outcome, not an error.
    package func join(
        room: JID, nick: String, occupant: JID, history: MUCHistoryRequest = .none, password: String? = nil,
        timeout: Duration? = nil, extensions: [XElement] = []
    ) async throws -> JoinOutcome {
        guard let matcher = OccupantPresenceMatcher(room: room, nick: nick, occupant: occupant) else {
            throw XMPPRequestError.invalidNick(nick)
        }
        let presence = Presence(
            from: occupant, to: matcher.requestedOccupant, mucJoin: MUCJoinRequest(history: history, password: password),
            extensions: extensions)
        let match = try await sendAwaitingOccupantPresence(
            presence, matcher: matcher, label: "join of \(matcher.requestedOccupant) by \(occupant)", timeout: timeout)
        switch match {
        case .available(let selfPresence):
            if selfPresence.createdRoom {
                try await configureCreatedRoom(room: matcher.room, owner: occupant, timeout: timeout)
            }
            sessionLogger.debug("Joined a room", metadata: [
                "xmpp.room": matcher.room.description, "xmpp.occupant": occupant.description,
                "xmpp.room.created": "\(selfPresence.createdRoom)",
            ])
            return .joined(selfPresence)
        case .unavailable(let selfPresence):
            return .notAllowed(StanzaError(
                type: .cancel, condition: .notAllowed,
                text: "removed while joining (status \(selfPresence.statusCodes.map(\.description).joined(separator: ",")))"))
        case .error(let error):
            return error.condition == .conflict ? .nickConflict : .notAllowed(error)
        }
    }

    /// Leaves `room` where `occupant` is `nick` (XEP-0045 §7.14) and waits for the room's unavailable self-presence.
    /// ``LeaveOutcome/unconfirmed`` when none comes before `timeout` (rooms ignore leaving by a non-occupant).
    package func leave(
        room: JID, nick: String, occupant: JID, status: String? = nil, timeout: Duration? = nil
    ) async throws -> LeaveOutcome {
        guard let matcher = OccupantPresenceMatcher(room: room, nick: nick, occupant: occupant) else {
            throw XMPPRequestError.invalidNick(nick)
        }
        let presence = Presence(type: .unavailable, from: occupant, to: matcher.requestedOccupant, status: status)
        do {
            let match = try await sendAwaitingOccupantPresence(
                presence, matcher: matcher, label: "leave of \(matcher.requestedOccupant) by \(occupant)", timeout: timeout)
            switch match {
            case .unavailable(let selfPresence), .available(let selfPresence): return .left(selfPresence)
            case .error(let error): throw XMPPRequestError.requestFailed(error)
            }
        } catch XMPPRequestError.timeout {
            return .unconfirmed
        }
    }

    /// Changes `occupant`'s nick in `room` to `newNick` (XEP-0045 §7.6) and waits for the self-presence from the
    /// new nick (or a `conflict`). `extensions` are added to the presence.
    package func changeNick(room: JID, to newNick: String, occupant: JID, timeout: Duration? = nil,
                           extensions: [XElement] = []) async throws -> NickChangeOutcome {
        guard let matcher = OccupantPresenceMatcher(room: room, nick: newNick, occupant: occupant) else {
            throw XMPPRequestError.invalidNick(newNick)
        }
        let presence = Presence(from: occupant, to: matcher.requestedOccupant, extensions: extensions)
        let match = try await sendAwaitingOccupantPresence(
            presence, matcher: matcher, label: "nick change to \(matcher.requestedOccupant) by \(occupant)", timeout: timeout)
        switch match {
        case .available(let selfPresence): return .changed(selfPresence)
        case .unavailable(let selfPresence):
            return .notAllowed(StanzaError(type: .cancel, condition: .notAllowed,
                                           text: "left the room (status \(selfPresence.statusCodes.map(\.description)))"))
        case .error(let error): return error.condition == .conflict ? .nickConflict : .notAllowed(error)
        }
    }

    /// Sends a groupchat message from `occupant` to `room` with a XEP-0359 `<origin-id>` (also used as the stanza
    /// `id`, so the room's reflection can be recognised by either). `body` goes out exactly as given (escaped by the
    /// serializer); `extensions` (corrections, replies, reactions…) are appended as they are. `type` is `groupchat`
    /// unless given (e.g. `.chat` for a private message to an occupant JID `room@service/nick` as `room`).
    /// Returns the message as sent.
    @discardableResult
    package func sendGroupchat(
        from occupant: JID, room: JID, body: String?, originID: OriginID? = nil, extensions: [XElement] = [],
        type: Message.MessageType = .groupchat
    ) throws -> Message {
        let originID = originID ?? StanzaAttributeID.random().originID!
        let message = Message(
            type: type, from: occupant, to: type == .groupchat ? room.bare : room, id: StanzaAttributeID(originID.rawValue),
            body: body, originID: originID, extensions: extensions)
        try send(.message(message))
        return message
    }

    /// XEP-0410 self-ping: pings `occupant`'s own occupant JID `room/nick` and says whether it is still joined.
    /// No answer before `timeout` is ``SelfPingOutcome/inconclusive``.
    package func selfPing(room: JID, nick: String, occupant: JID, timeout: Duration? = nil) async throws -> SelfPingOutcome {
        guard let target = room.bare.with(resource: nick) else { throw XMPPRequestError.invalidNick(nick) }
        do {
            let response = try await sendIQ(IQ(type: .get, from: occupant, to: target, payload: .ping), timeout: timeout)
            return SelfPingOutcome(response: response)
        } catch XMPPRequestError.timeout {
            return .inconclusive
        }
    }

    /// XEP-0030 disco#info of `entity` (e.g. a room: does it offer MAM, `#extended`, stable ids, occupant ids?),
    /// asked by `requester` (default: ``defaultRequester``).
    package func discoInfo(of entity: JID, as requester: JID? = nil, timeout: Duration? = nil) async throws -> DiscoInfo {
        let from = requester ?? defaultRequester
        let response = try await sendIQ(IQ(type: .get, from: from, to: entity, payload: .discoInfo(DiscoInfo())), timeout: timeout)
        if response.type == .error {
            throw XMPPRequestError.requestFailed(response.error ?? StanzaError(type: .cancel, condition: .undefinedCondition))
        }
        guard case .discoInfo(let info)? = response.payload else {
            throw XMPPRequestError.unexpectedResponse("disco#info result without a disco#info query from \(entity)")
        }
        return info
    }

    /// XEP-0045 §10.1: configures a room we just created, which unlocks it. Asks for the configuration form first
    /// (§10.1.3) and, when it has a switch for the room's archive, submits it turned on (``CreatedRoomConfiguration``);
    /// otherwise — or when asking fails — accepts the defaults with an empty `submit` form (§10.1.2, instant room).
    /// Only rooms our own join created get here: an existing room's configuration is never changed.
    func configureCreatedRoom(room: JID, owner: JID, timeout: Duration?) async throws {
        var offered: DataForm?
        if let answer = try? await sendIQ(IQ(type: .get, from: owner, to: room.bare, payload: .mucOwner(nil)), timeout: timeout),
           answer.type == .result, case .mucOwner(let form)? = answer.payload {
            offered = form
        }
        let submission = CreatedRoomConfiguration.submission(offered: offered)
        let response = try await sendIQ(
            IQ(type: .set, from: owner, to: room.bare, payload: .mucOwner(submission)), timeout: timeout)
        if response.type == .error {
            throw XMPPRequestError.requestFailed(response.error ?? StanzaError(type: .cancel, condition: .undefinedCondition))
        }
        sessionLogger.info("Created a room", metadata: [
            "xmpp.room": room.description,
            "xmpp.room.archiving": CreatedRoomConfiguration.enablesArchiving(submission) ? "enabled" : "server default",
        ])
    }
}
