import FoundationEssentials
import IsthmusCommon
import Matrix

extension MatrixClient {
    /// Sends a message-like event with a caller-chosen transaction id (`PUT /rooms/{roomId}/send/{eventType}/{txnId}`,
    /// client-server API §9.4.3). Repeating a txnId returns the first event id instead of sending again (Synapse keeps
    /// an appservice's txnIds per appservice and room, not per ghost: see ``Matrix/ClientTransactionID/derived(fromSourceKey:)``).
    /// `timestamp` (ms since the epoch) becomes `origin_server_ts` (appservice API §2.4.4 "Timestamp massaging").
    /// `retry`: ``RetryPolicy/Mode/full`` repeats the request after a reset, a timeout or a 5xx, trusting the
    /// transaction id; ``RetryPolicy/Mode/rateLimitOnly`` leaves those to the caller (a homeserver that restarts
    /// forgets an appservice user's transaction ids, so a repeat after it may store the event twice).
    public func send(_ content: some Encodable & Sendable, type: String, to room: RoomID, transactionID: ClientTransactionID,
                     as user: UserID? = nil, timestamp: Int64? = nil, retry: RetryPolicy.Mode = .full) async throws(MatrixError) -> EventID {
        let body = try json(content, call: .send)
        return try await perform(ClientRequest(
            .send, "PUT",
            ["_matrix/client/v3/rooms", .param("roomId", room), "send", .param("eventType", type), .param("txnId", transactionID)],
            query: acting(user) + (timestamp.map { [("ts", String($0))] } ?? []), body: body, retry: retry),
            as: Bodies.EventIDResponse.self).eventID
    }

    /// Sends an `m.room.message`; see ``send(_:type:to:transactionID:as:timestamp:retry:)``.
    public func sendMessage(_ content: MessageContent, to room: RoomID, transactionID: ClientTransactionID, as user: UserID? = nil,
                            timestamp: Int64? = nil, retry: RetryPolicy.Mode = .full) async throws(MatrixError) -> EventID {
        try await send(content, type: MatrixEventType.message, to: room, transactionID: transactionID, as: user, timestamp: timestamp,
                       retry: retry)
    }

    /// Sets a state event (`PUT /rooms/{roomId}/state/{eventType}/{stateKey}`, client-server API §9.4.3). Returns its id.
    public func sendState(_ content: some Encodable & Sendable, type: String, stateKey: String = "", to room: RoomID,
                          as user: UserID? = nil, timestamp: Int64? = nil) async throws(MatrixError) -> EventID {
        let body = try json(content, call: .sendState)
        return try await perform(ClientRequest(
            .sendState, "PUT",
            ["_matrix/client/v3/rooms", .param("roomId", room), "state", .param("eventType", type), .param("stateKey", stateKey)],
            query: acting(user) + (timestamp.map { [("ts", String($0))] } ?? []), body: body), as: Bodies.EventIDResponse.self).eventID
    }

    /// Redacts `event` with a caller-chosen txnId (`PUT /rooms/{roomId}/redact/{eventId}/{txnId}`, spec §11.8). Returns
    /// the redaction's event id.
    public func redact(_ event: EventID, in room: RoomID, transactionID: ClientTransactionID, reason: String? = nil,
                       as user: UserID? = nil) async throws(MatrixError) -> EventID {
        let body = try json(Bodies.Reason(reason: reason), call: .redact)
        return try await perform(ClientRequest(
            .redact, "PUT",
            ["_matrix/client/v3/rooms", .param("roomId", room), "redact", .param("eventId", event), .param("txnId", transactionID)],
            query: acting(user), body: body), as: Bodies.EventIDResponse.self).eventID
    }

    /// The content of a state event, or nil when the room has none (`GET /rooms/{roomId}/state/{eventType}/{stateKey}`).
    public func stateEvent<Content: Decodable>(_ contentType: Content.Type, type: String, stateKey: String = "", in room: RoomID,
                                                as user: UserID? = nil) async throws(MatrixError) -> Content? {
        try await stateEvent(Content.self, type: type, stateKey: stateKey, in: room, as: user, extraQuery: [])
    }

    /// `GET /rooms/{roomId}/state/{eventType}/{stateKey}` with `extraQuery`, decoded as `T`; nil on `M_NOT_FOUND`.
    func stateEvent<T: Decodable>(_ answer: T.Type, type: String, stateKey: String, in room: RoomID, as user: UserID?,
                                  extraQuery: [(String, String)]) async throws(MatrixError) -> T? {
        do {
            return try await perform(ClientRequest(
                .stateEvent, "GET",
                ["_matrix/client/v3/rooms", .param("roomId", room), "state", .param("eventType", type), .param("stateKey", stateKey)],
                query: acting(user) + extraQuery), as: T.self)
        } catch where error.status == 404 && error.errcode == MatrixErrorCode.notFound {
            return nil
        }
    }

    /// One event of `room` as `user` sees it (`GET /rooms/{roomId}/event/{eventId}`).
    public func event(_ event: EventID, in room: RoomID, as user: UserID? = nil) async throws(MatrixError) -> ClientEvent {
        try await perform(ClientRequest(
            .event, "GET", ["_matrix/client/v3/rooms", .param("roomId", room), "event", .param("eventId", event)], query: acting(user)))
    }

    /// Resolves `alias` to a room id (`GET /directory/room/{roomAlias}`). Throws `M_NOT_FOUND` for an unknown alias.
    public func resolveAlias(_ alias: RoomAlias) async throws(MatrixError) -> ResolvedAlias {
        try await perform(ClientRequest(.resolveAlias, "GET", ["_matrix/client/v3/directory/room", .param("roomAlias", alias)]))
    }

    /// Creates a room as `user` (`POST /createRoom`). Not retried after an ambiguous failure (it could create two).
    public func createRoom(_ request: CreateRoomRequest, as user: UserID? = nil) async throws(MatrixError) -> RoomID {
        let body = try json(request, call: .createRoom)
        return try await perform(ClientRequest(.createRoom, "POST", ["_matrix/client/v3/createRoom"], query: acting(user), body: body,
                                               retry: .rateLimitOnly), as: Bodies.RoomIDResponse.self).roomID
    }

    /// Shows or clears `user`'s typing notice in `room` (`PUT /rooms/{roomId}/typing/{userId}`, spec §11.5).
    public func setTyping(_ typing: Bool, in room: RoomID, for user: UserID, timeout: Duration = .seconds(30)) async throws(MatrixError) {
        struct Body: Encodable {
            var typing: Bool
            var timeout: Int64?
        }
        let body = try json(Body(typing: typing, timeout: typing ? timeout.components.seconds * 1000 : nil), call: .setTyping)
        let _: Bodies.Empty = try await perform(ClientRequest(
            .setTyping, "PUT", ["_matrix/client/v3/rooms", .param("roomId", room), "typing", .param("userId", user)],
            query: acting(user), body: body))
    }

    /// Marks `event` read by `user` (`POST /rooms/{roomId}/receipt/m.read/{eventId}`, spec §11.6).
    public func sendReadReceipt(for event: EventID, in room: RoomID, as user: UserID) async throws(MatrixError) {
        let _: Bodies.Empty = try await perform(ClientRequest(
            .sendReadReceipt, "POST", ["_matrix/client/v3/rooms", .param("roomId", room), "receipt", "m.read", .param("eventId", event)],
            query: acting(user), body: Data("{}".utf8)))
    }
}
