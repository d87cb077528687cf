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
}
