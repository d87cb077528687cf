import IsthmusCommon
import Matrix

/// One page of a room's timeline from `GET /rooms/{roomId}/messages` (client-server API §10.5 "Syncing":
/// "Getting events for a room").
public struct RoomMessagesPage: Sendable, Equatable, Decodable {
    /// The page's events in the order asked for (`dir=b`: newest first). Events that do not decode as a
    /// `ClientEvent` are left out and counted in ``undecodable``.
    public var events: [ClientEvent]
    /// Events of the page that did not decode (a malformed event must not hide the rest of the page).
    public var undecodable: Int
    /// The token to continue from; nil at the end of the timeline.
    public var end: String?

    public init(events: [ClientEvent], undecodable: Int = 0, end: String?) {
        self.events = events
        self.undecodable = undecodable
        self.end = end
    }

    enum CodingKeys: String, CodingKey { case chunk, end }

    private struct Lossy: Decodable {
        var event: ClientEvent?
        init(from decoder: any Decoder) throws { event = try? ClientEvent(from: decoder) }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let chunk = try container.decodeIfPresent([Lossy].self, forKey: .chunk) ?? []
        events = chunk.compactMap(\.event)
        undecodable = chunk.count - events.count
        end = try container.decodeIfPresent(String.self, forKey: .end)
    }
}

extension MatrixClient {
    /// The direction to page a room's timeline in.
    public enum TimelineDirection: String, Sendable {
        case backward = "b"
        case forward = "f"
    }

    /// A page of `room`'s timeline as `user` sees it (`GET /rooms/{roomId}/messages`). `from` nil starts at the
    /// newest event (backward) or the oldest visible one (forward); `limit` is capped by the homeserver.
    public func roomMessages(in room: RoomID, from token: String? = nil, direction: TimelineDirection = .backward,
                             limit: Int = 100, as user: UserID? = nil) async throws(MatrixError) -> RoomMessagesPage {
        var query: [(String, String)] = [("dir", direction.rawValue), ("limit", String(limit))]
        if let token { query.append(("from", token)) }
        return try await perform(ClientRequest(
            .roomMessages, "GET", ["_matrix/client/v3/rooms", .param("roomId", room), "messages"], query: query + acting(user)))
    }

    /// The timeline tokens just before and just after `event` (`GET /rooms/{roomId}/context/{eventId}?limit=0`): where
    /// to page from to read what precedes it (`start`, backward) or follows it (`end`, forward).
    public func eventContext(_ event: EventID, in room: RoomID, as user: UserID? = nil) async throws(MatrixError) -> (start: String?, end: String?) {
        struct Context: Decodable { var start: String?; var end: String? }
        let context: Context = try await perform(ClientRequest(
            .eventContext, "GET", ["_matrix/client/v3/rooms", .param("roomId", room), "context", .param("eventId", event)],
            query: [("limit", "0")] + acting(user)))
        return (context.start, context.end)
    }
}
