import FoundationEssentials
import IsthmusCommon
import Matrix

/// One event of a room's current state, decoded leniently: its content stays JSON (any state type, any room
/// version), so one odd event never fails the whole read. Pure value.
public struct RoomStateEvent: Sendable, Equatable, Decodable {
    public var type: String
    public var stateKey: String
    /// The sender as given (`m.room.create`'s sender is the room's creator from room version 11 on).
    public var sender: String
    public var content: JSONValue

    public init(type: String, stateKey: String = "", sender: String, content: JSONValue) {
        self.type = type
        self.stateKey = stateKey
        self.sender = sender
        self.content = content
    }

    enum CodingKeys: String, CodingKey {
        case type, sender, content
        case stateKey = "state_key"
    }
}

extension MatrixClient {
    /// Every current state event of `room` as `user` sees it (`GET /rooms/{roomId}/state`, client-server API §9.4.2).
    /// One call instead of one per event type: the `m.room.create` sender (the creator) is only in the full event.
    public func roomState(_ room: RoomID, as user: UserID? = nil) async throws(MatrixError) -> [RoomStateEvent] {
        try await perform(ClientRequest(
            .roomState, "GET", ["_matrix/client/v3/rooms", .param("roomId", room), "state"], query: acting(user)))
    }

    /// One state event of `room` whole — type, state key, sender and content — or nil when the room has none
    /// (`GET /rooms/{roomId}/state/{eventType}/{stateKey}?format=event`, client-server API §9.4.2; Synapse has answered
    /// `format=event` for years). For `m.room.create`, whose sender is the creator, without reading the whole state.
    public func stateEventWithSender(type: String, stateKey: String = "", in room: RoomID,
                                     as user: UserID? = nil) async throws(MatrixError) -> RoomStateEvent? {
        try await stateEvent(RoomStateEvent.self, type: type, stateKey: stateKey, in: room, as: user, extraQuery: [("format", "event")])
    }
}
