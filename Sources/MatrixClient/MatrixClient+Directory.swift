import FoundationEssentials
import IsthmusCommon
import Matrix

extension MatrixClient {
    /// Points `alias` at `room` (`PUT /directory/room/{roomAlias}`, client-server API §10.2). Throws `M_ROOM_IN_USE`
    /// (409) when the alias already names a room. Idempotent in effect: repeating it after an ambiguous failure fails with
    /// that conflict, which the caller reads back with ``resolveAlias(_:)``.
    public func setAlias(_ alias: RoomAlias, to room: RoomID, as user: UserID? = nil) async throws(MatrixError) {
        struct Body: Encodable { var room_id: String }
        let body = try json(Body(room_id: room.rawValue), call: .setAlias)
        let _: Bodies.Empty = try await perform(ClientRequest(
            .setAlias, "PUT", ["_matrix/client/v3/directory/room", .param("roomAlias", alias)], query: acting(user), body: body,
            retry: .rateLimitOnly))
    }

    /// Removes `alias` from the directory (`DELETE /directory/room/{roomAlias}`).
    public func deleteAlias(_ alias: RoomAlias, as user: UserID? = nil) async throws(MatrixError) {
        let _: Bodies.Empty = try await perform(ClientRequest(
            .deleteAlias, "DELETE", ["_matrix/client/v3/directory/room", .param("roomAlias", alias)], query: acting(user)))
    }

    /// The local aliases of `room` (`GET /rooms/{roomId}/aliases`; the caller must be able to see the room).
    public func roomAliases(of room: RoomID, as user: UserID? = nil) async throws(MatrixError) -> [RoomAlias] {
        struct Response: Decodable { var aliases: [String] }
        let response: Response = try await perform(ClientRequest(
            .roomAliases, "GET", ["_matrix/client/v3/rooms", .param("roomId", room), "aliases"], query: acting(user)))
        return response.aliases.compactMap(RoomAlias.init)
    }

    /// A page of the room directory (`POST /publicRooms`, client-server API §10.5): of `server` (nil: ours), at most
    /// `limit` rooms from `since` (a page token), whose name, topic or alias holds `search` when given.
    public func publicRooms(server: String? = nil, limit: Int, since: String? = nil, search: String? = nil,
                            as user: UserID? = nil) async throws(MatrixError) -> PublicRoomsPage {
        struct Filter: Encodable { var generic_search_term: String }
        struct Body: Encodable {
            var limit: Int
            var since: String?
            var filter: Filter?
        }
        let body = try json(Body(limit: limit, since: since, filter: search.map { Filter(generic_search_term: $0) }), call: .publicRooms)
        return try await perform(ClientRequest(
            .publicRooms, "POST", ["_matrix/client/v3/publicRooms"], query: acting(user) + (server.map { [("server", $0)] } ?? []),
            body: body))
    }
}

/// One page of a room directory.
public struct PublicRoomsPage: Sendable, Equatable, Decodable {
    /// A room as the directory lists it.
    public struct Room: Sendable, Equatable, Decodable {
        public var roomID: RoomID
        public var name: String?
        public var topic: String?
        public var canonicalAlias: RoomAlias?
        public var joinedMembers: Int?

        enum CodingKeys: String, CodingKey {
            case roomID = "room_id", name, topic, canonicalAlias = "canonical_alias", joinedMembers = "num_joined_members"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            roomID = try container.decode(RoomID.self, forKey: .roomID)
            name = try? container.decodeIfPresent(String.self, forKey: .name)
            topic = try? container.decodeIfPresent(String.self, forKey: .topic)
            canonicalAlias = (try? container.decodeIfPresent(String.self, forKey: .canonicalAlias)).flatMap { $0.flatMap(RoomAlias.init) }
            joinedMembers = try? container.decodeIfPresent(Int.self, forKey: .joinedMembers)
        }

        public init(roomID: RoomID, name: String? = nil, canonicalAlias: RoomAlias? = nil) {
            self.roomID = roomID
            self.name = name
            self.canonicalAlias = canonicalAlias
        }
    }

    public var rooms: [Room]
    /// The token of the next page; nil at the end.
    public var nextBatch: String?
    /// The homeserver's estimate of all the rooms listed.
    public var total: Int?

    enum CodingKeys: String, CodingKey { case rooms = "chunk", nextBatch = "next_batch", total = "total_room_count_estimate" }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // A malformed room must not hide the rest of the page.
        struct Lossy: Decodable {
            var room: Room?
            init(from decoder: any Decoder) throws { room = try? Room(from: decoder) }
        }
        rooms = (try container.decodeIfPresent([Lossy].self, forKey: .rooms) ?? []).compactMap(\.room)
        nextBatch = try? container.decodeIfPresent(String.self, forKey: .nextBatch)
        total = try? container.decodeIfPresent(Int.self, forKey: .total)
    }

    public init(rooms: [Room], nextBatch: String?, total: Int?) {
        self.rooms = rooms
        self.nextBatch = nextBatch
        self.total = total
    }
}
