import FoundationEssentials
import IsthmusCommon
import Matrix
import MatrixClient
import MatrixCrypto

/// The production ``MatrixLink``: the appservice's client-server API, as the bot or as a ghost (`?user_id=`).
///
/// Ghost joins go through an invite by the bot when the room is not joinable for them; membership calls that find
/// the desired state already in place count as success; a ghost's message refused with `M_FORBIDDEN` joins the ghost
/// and is sent once more (see ``send(_:as:in:txnID:timestamp:)``). Every method but the name lookups (``botUserID``,
/// ``ghostUserID(forIdentity:)``, ``isGhost(_:)``) does network I/O.
///
/// Every client call goes through ``observed(_:_:)``: its method, outcome and duration go to `metrics` (the one place
/// the bridge's homeserver requests are measured, whichever HTTP client sits below).
public struct AppServiceMatrixLink: MatrixLink {
    let client: MatrixClient
    let namespace: GhostNamespace
    let logger: Logger
    let metrics: BridgeMetrics?
    /// `encryption.allow`: ghosts' messages and reactions in encrypted rooms go out encrypted by their devices.
    let encryption: GhostDevices?
    /// `encryption.default` or `require`: the DMs the bridge creates are encrypted.
    let encryptsCreatedRooms: Bool

    public init(client: MatrixClient, namespace: GhostNamespace, logger: Logger, metrics: BridgeMetrics? = nil) {
        self.init(client: client, namespace: namespace, logger: logger, metrics: metrics, encryption: nil)
    }

    init(client: MatrixClient, namespace: GhostNamespace, logger: Logger, metrics: BridgeMetrics?, encryption: GhostDevices?,
         encryptsCreatedRooms: Bool = false) {
        self.encryption = encryption
        self.encryptsCreatedRooms = encryption != nil && encryptsCreatedRooms
        self.client = client
        self.namespace = namespace
        self.logger = logger
        self.metrics = metrics
    }

    /// Runs one client call as `method`, recording its outcome and duration.
    func observed<T>(_ method: HomeserverCall, _ body: () async throws(MatrixError) -> T) async throws(MatrixError) -> T {
        let start = ContinuousClock.now
        do {
            let result = try await body()
            metrics?.homeserverRequest(method, succeeded: true, duration: .now - start)
            return result
        } catch {
            metrics?.homeserverRequest(method, succeeded: false, duration: .now - start)
            throw error
        }
    }

    /// `GET /_matrix/client/versions`: whether the homeserver answers at all (the readiness check of an idle bridge).
    public func checkHomeserver() async -> Bool {
        (try? await observed(.versions) { () async throws(MatrixError) in try await client.versions() }) != nil
    }

    public var botUserID: UserID { namespace.botUserID }

    public func ghostUserID(forIdentity identity: String) -> UserID? { namespace.userID(for: identity) }

    public func isGhost(_ user: UserID) -> Bool { namespace.isGhost(user) }

    public func registerGhost(_ ghost: UserID) async throws {
        do {
            _ = try await observed(.register) { () async throws(MatrixError) in try await client.registerGhost(ghost) }
        } catch {
            throw Self.classify(error)
        }
    }

    /// Network failures, timeouts and server errors become ``MatrixLinkError/unavailable(_:)`` (retry later);
    /// refusals stay ``MatrixError``s.
    static func classify(_ error: MatrixError) -> any Error {
        switch error.kind {
        case .transport, .timeout: return MatrixLinkError.unavailable(error.description)
        case .homeserver where (error.status ?? 0) >= 500: return MatrixLinkError.unavailable(error.description)
        // A certificate the bridge does not accept (or a TLS or URL setting that cannot work) fails every call until
        // the operator fixes it: the message is not the problem, so it waits like during an outage (nothing is lost)
        // while the log names the certificate, not "homeserver unavailable".
        case .unusable: return MatrixLinkError.unavailable(error.message)
        // An account an administrator locked (client-server API §"Account locking"): calls work again once it is
        // unlocked, so messages wait as during an outage instead of failing for good.
        case .homeserver where error.errcode == .userLocked:
            return MatrixLinkError.unavailable("the homeserver locked the bridge's Matrix account: \(error.message)")
        default: return error
        }
    }

    public func setDisplayname(_ name: String, for user: UserID) async throws {
        try await classified(.setDisplayname) { () async throws(MatrixError) in try await client.setDisplayName(name, of: user) }
    }

    /// Runs a client call as `method` (see ``observed(_:_:)``), classifying its failure (see ``classify(_:)``).
    private func classified<T>(_ method: HomeserverCall, _ body: () async throws(MatrixError) -> T) async throws -> T {
        do {
            return try await observed(method, body)
        } catch {
            throw Self.classify(error)
        }
    }

    public func join(_ room: RoomID, as user: UserID) async throws {
        let firstTry: MatrixError?
        do {
            _ = try await observed(.join) { () async throws(MatrixError) in try await client.join(room, as: user) }
            firstTry = nil
        } catch {
            firstTry = error
        }
        guard let firstTry else { return }
        guard user != botUserID, firstTry.errcode == .forbidden else { throw Self.classify(firstTry) }
        // Not joinable for the ghost (invite-only room): the bot invites it, then it joins.
        do {
            try await observed(.invite) { () async throws(MatrixError) in try await client.invite(user, to: room, as: botUserID) }
        } catch {
            // An unreachable homeserver is not a refusal: the caller waits and tries again (found by scripts/chaos,
            // seed 4711: the invite failed during a Synapse restart, the join after it was refused, the message lost).
            if let unavailable = Self.classify(error) as? MatrixLinkError { throw unavailable }
            // Already invited is fine; anything else shows up in the join below.
            logger.debug("Invite before ghost join failed", metadata: ["matrix.user.id": user.rawValue, "error": "\(error)"])
        }
        _ = try await classified(.join) { () async throws(MatrixError) in try await client.join(room, as: user) }
    }

    public func leave(_ room: RoomID, as user: UserID, reason: String?) async throws {
        do {
            try await observed(.leave) { () async throws(MatrixError) in try await client.leave(room, as: user, reason: reason) }
        } catch {
            // Not in the room (any more) reaches the goal too.
            if error.errcode == .forbidden || error.errcode == .notFound { return }
            throw error
        }
    }

    public func remove(_ user: UserID, from room: RoomID, ban: Bool, reason: String?) async throws {
        if ban {
            try await observed(.ban) { () async throws(MatrixError) in try await client.ban(user, from: room, as: botUserID, reason: reason) }
        } else {
            try await observed(.kick) { () async throws(MatrixError) in try await client.kick(user, from: room, as: botUserID, reason: reason) }
        }
    }

    /// Sets the bridge-info state under both of its event types, as the bot; `{}` when `state.content` is nil.
    public func setBridgeInfo(_ state: BridgeInfoState, in room: RoomID) async throws {
        for type in BridgeInfoState.eventTypes {
            _ = try await classified(.setState) { () async throws(MatrixError) in
                if let content = state.content {
                    try await client.sendState(content, type: type, stateKey: state.stateKey, to: room, as: botUserID)
                } else {
                    try await client.sendState(JSONValue.object([:]), type: type, stateKey: state.stateKey, to: room, as: botUserID)
                }
            }
        }
    }

    public func setRoomDisplayname(_ name: String, for user: UserID, in room: RoomID) async throws {
        _ = try await classified(.setRoomDisplayname) { () async throws(MatrixError) in
            try await client.setRoomDisplayName(name, in: room, for: user)
        }
    }

    public func setRoomAvatar(_ mxc: MXCURI?, for user: UserID, in room: RoomID) async throws {
        _ = try await classified(.setRoomAvatar) { () async throws(MatrixError) in
            let current = try await client.stateEvent(MemberContent.self, type: MatrixEventType.member, stateKey: user.rawValue,
                                                      in: room, as: user)
            if current?.membership == .join, current?.avatarURL == mxc?.description { return }
            _ = try await client.setRoomAvatarURL(mxc?.description, in: room, for: user)
        }
    }

    public func send(_ message: OutgoingMatrixMessage, as user: UserID, in room: RoomID, txnID: ClientTransactionID,
                     timestamp: Date?) async throws -> EventID {
        let content = Self.content(message)
        let ts = Self.milliseconds(timestamp)
        // No repeat inside the client after a reset, a timeout or a 5xx: the request may have been stored, and a
        // homeserver that restarted meanwhile no longer knows the transaction id. The portal retries instead, after
        // looking for the stored copy (found by scripts/chaos, seed 8086).
        do {
            if let encrypted = try await encrypted(MatrixEventType.message, content, as: user, in: room) {
                return try await classified(.send) { () async throws(MatrixError) in
                    try await client.send(encrypted, type: MatrixEventType.encrypted, to: room, transactionID: txnID, as: user,
                                          timestamp: ts, retry: .rateLimitOnly)
                }
            }
            return try await classified(.send) { () async throws(MatrixError) in
                try await client.sendMessage(content, to: room, transactionID: txnID, as: user, timestamp: ts, retry: .rateLimitOnly)
            }
        } catch let refusal as MatrixError where user != botUserID && refusal.errcode == .forbidden {
            // A ghost is refused only when it is not in the room (or may not speak): whether it joins and sends
            // again is the caller's decision (the portal's machine, the DMs).
            throw MatrixLinkError.notInRoom(refusal.description)
        }
    }

    public func react(to target: EventID, key: String, as user: UserID, in room: RoomID, txnID: ClientTransactionID,
                      timestamp: Date?) async throws -> EventID? {
        let ts = Self.milliseconds(timestamp)
        do {
            let reaction = ReactionContent(reactingTo: target, key: key)
            if let encrypted = try await encrypted(MatrixEventType.reaction, reaction, as: user, in: room) {
                return try await classified(.react) { () async throws(MatrixError) in
                    try await client.send(encrypted, type: MatrixEventType.encrypted, to: room, transactionID: txnID, as: user, timestamp: ts)
                }
            }
            return try await classified(.react) { () async throws(MatrixError) in
                try await client.send(reaction, type: MatrixEventType.reaction, to: room, transactionID: txnID, as: user, timestamp: ts)
            }
        } catch let error as MatrixError where error.errcode == .duplicateAnnotation {
            return nil
        }
    }

    public func redact(_ event: EventID, reason: String?, as user: UserID, in room: RoomID,
                       txnID: ClientTransactionID) async throws -> EventID {
        try await classified(.redact) { () async throws(MatrixError) in
            try await client.redact(event, in: room, transactionID: txnID, reason: reason, as: user)
        }
    }

    public func encryptsFiles(in room: RoomID, as user: UserID) async throws -> Bool {
        guard let encryption, namespace.isOurs(user) else { return false }
        do {
            return try await encryption.isEncrypted(room, as: user)
        } catch let error as MatrixError {
            // As in `send`: a ghost refused is not in the room (the caller joins it and tries again).
            if error.errcode == .forbidden && user != botUserID { throw MatrixLinkError.notInRoom(error.description) }
            throw Self.classify(error)
        }
    }

    /// `content` encrypted by `user`'s device when `user` is a ghost or the bot and `room` is encrypted (`encryption.allow`);
    /// nil to send it as it is.
    /// The homeserver's refusals and outages reach the caller as any send's would (a ghost not in the room, an
    /// unavailable homeserver).
    private func encrypted(_ type: String, _ content: some Encodable, as user: UserID, in room: RoomID) async throws -> JSONValue? {
        // The bot too: its notices in an encrypted room are encrypted by a device of its own, as a ghost's messages.
        guard let encryption, namespace.isOurs(user) else { return nil }
        do {
            guard try await encryption.isEncrypted(room, as: user) else { return nil }
            let clear = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(content))
            return try await encryption.encrypt(type: type, content: clear, in: room, as: user)
        } catch let error as MatrixError {
            // A ghost's refusal stays a MatrixError: `send` turns it into "not in the room" (the caller joins it).
            if error.errcode == .forbidden && user != botUserID { throw error }
            throw Self.classify(error)
        }
    }

    /// The `m.room.message` content for a message to send.
    static func content(_ message: OutgoingMatrixMessage) -> MessageContent {
        let type = MessageType(rawValue: message.kind.rawValue)
        var content = MessageContent(messageType: type, body: message.body,
                                     format: message.html == nil ? nil : MessageContent.htmlFormat, formattedBody: message.html,
                                     relatesTo: message.relatesTo, mentions: Mentions(userIDs: message.mentions))
        if let media = message.media {
            content.messageType = media.msgtype
            // Encrypted (in an encrypted room): `file` in place of `url` (spec §11.12.4.5).
            if let keys = media.keys { content.file = keys.file(at: media.mxc) } else { content.url = media.mxc.description }
            content.fileName = media.fileName
            content.info = media.info
        }
        if let new = message.replacement {
            content.newContent = NewContent(messageType: type, body: new.body, format: new.html == nil ? nil : MessageContent.htmlFormat,
                                            formattedBody: new.html, mentions: Mentions(userIDs: new.mentions))
        }
        content.perMessageProfile = message.profile
        return content
    }

    static func milliseconds(_ date: Date?) -> Int64? {
        date.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
    }

    public func setTopic(_ topic: String, in room: RoomID, as user: UserID) async throws {
        _ = try await classified(.setState) { () async throws(MatrixError) in
            try await client.sendState(RoomTopicContent.plain(topic), type: MatrixEventType.roomTopic, to: room, as: user)
        }
    }

    public func setRoomName(_ name: String, in room: RoomID) async throws {
        _ = try await classified(.setState) { () async throws(MatrixError) in
            try await client.sendState(RoomNameContent(name: name), type: MatrixEventType.roomName, to: room, as: botUserID)
        }
    }

    public func setRoomPicture(_ mxc: MXCURI?, in room: RoomID) async throws {
        _ = try await classified(.setState) { () async throws(MatrixError) in
            try await client.sendState(RoomAvatarContent(url: mxc?.description), type: MatrixEventType.roomAvatar, to: room, as: botUserID)
        }
    }

    /// The room's `m.room.avatar` URL; one that is not a valid `mxc://` URI counts as none.
    public func roomPicture(_ room: RoomID) async throws -> MXCURI? {
        try await classified(.getState) { () async throws(MatrixError) in
            try await client.stateEvent(RoomAvatarContent.self, type: MatrixEventType.roomAvatar, in: room, as: botUserID)
        }?.url.flatMap(MXCURI.init(mxc:))
    }

    public func joinReplacement(_ room: RoomID, via servers: [String]) async throws -> RoomID? {
        _ = try await classified(.join) { () async throws(MatrixError) in try await client.join(room, via: servers, as: botUserID) }
        let create = try await classified(.getState) { () async throws(MatrixError) in
            try await client.stateEvent(RoomCreateContent.self, type: MatrixEventType.create, in: room, as: botUserID)
        }
        return create?.predecessor?.roomID
    }

    /// An encrypted one with `encryption.default` (as Element makes them): the creator's first message is encrypted
    /// and shared with the invited user's devices.
    public func createDirectRoom(as creator: UserID, inviting user: UserID) async throws -> RoomID {
        var request = CreateRoomRequest(preset: "trusted_private_chat", invite: [user], isDirect: true)
        if encryptsCreatedRooms {
            request.initialState = [.init(type: MatrixEventType.encryption, content: .object(["algorithm": .string(MatrixAlgorithm.megolm)]))]
        }
        let room = try await classified(.createRoom) { () async throws(MatrixError) in
            try await client.createRoom(request, as: creator)
        }
        if encryptsCreatedRooms, let encryption { await encryption.noteEncryption(room, content: .object([:])) }
        return room
    }

    public func membership(of user: UserID, in room: RoomID, as viewer: UserID) async throws -> Membership? {
        try await classified(.state) { () async throws(MatrixError) in
            try await client.stateEvent(MemberContent.self, type: MatrixEventType.member, stateKey: user.rawValue, in: room, as: viewer)
        }?.membership
    }

    public func invite(_ user: UserID, to room: RoomID, reason: String?) async throws {
        do {
            try await observed(.invite) { () async throws(MatrixError) in
                try await client.invite(user, to: room, as: botUserID, reason: reason)
            }
        } catch {
            // Synapse refuses to invite a member who is joined or invited already (403): the goal is reached.
            if error.errcode == .forbidden, let membership = try? await membership(of: user, in: room, as: botUserID),
               membership == .join || membership == .invite { return }
            throw Self.classify(error)
        }
    }

    public func roomPowerState(_ room: RoomID) async throws -> RoomPowerState {
        // Two small reads rather than the whole state (every member event of a large room): `m.room.create` as a whole
        // event (its sender is a creator from room version 11 on) and the power levels' content.
        let create = try await classified(.state) { () async throws(MatrixError) in
            try await client.stateEventWithSender(type: MatrixEventType.create, in: room, as: botUserID)
        }
        let content = try await classified(.state) { () async throws(MatrixError) in
            try await client.stateEvent(JSONValue.self, type: MatrixEventType.powerLevels, in: room, as: botUserID)
        }
        let authority = RoomAuthority(state: create.map { [$0] } ?? [])
        return RoomPowerState(roomVersion: authority.roomVersion, creators: authority.creators, powerLevels: content)
    }

    public func setPowerLevels(_ content: JSONValue, in room: RoomID) async throws {
        _ = try await classified(.setState) { () async throws(MatrixError) in
            try await client.sendState(content, type: MatrixEventType.powerLevels, to: room, as: botUserID)
        }
    }

    public func joinedMembers(_ room: RoomID) async throws -> JoinedMembers {
        let profiles = try await observed(.joinedMembers) { () async throws(MatrixError) in
            try await client.joinedMembers(of: room, as: botUserID)
        }
        return JoinedMembers(displayNames: profiles.mapValues { $0.displayName },
                             avatars: profiles.compactMapValues { $0.avatarURL.flatMap(MXCURI.init(mxc:)) })
    }

    public func timeline(_ room: RoomID, from token: String?, limit: Int) async throws -> MatrixTimelinePage {
        let page = try await classified(.messages) { () async throws(MatrixError) in
            try await client.roomMessages(in: room, from: token, direction: .backward, limit: limit, as: botUserID)
        }
        if page.undecodable > 0 {
            logger.warning("Timeline page had undecodable events", metadata: ["matrix.room.id": room.rawValue, "count": "\(page.undecodable)"])
        }
        var events = page.events
        if let encryption {
            // Missed events of an encrypted room decrypt with the room keys kept from the transactions.
            for index in events.indices {
                guard case .unknown(type: MatrixEventType.encrypted, _) = events[index].content, !namespace.isOurs(events[index].sender),
                      case .decrypted(let clear) = try await encryption.decrypt(events[index]) else { continue }
                events[index] = clear
            }
        }
        let entries = events.map { event in
            MatrixTimelineEntry(eventID: event.eventID, timestamp: Date(timeIntervalSince1970: Double(event.originServerTS) / 1000),
                                age: event.unsigned?.age.map { .milliseconds($0) },
                                event: BridgeAppServiceHandler.roomEvent(event))
        }
        // An empty page or one that does not move on ends the timeline (guards against a homeserver looping).
        return MatrixTimelinePage(entries: entries, next: entries.isEmpty || page.end == token ? nil : page.end)
    }
}
