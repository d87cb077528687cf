import IsthmusCommon

/// Content of `m.room.name` (spec §11.2.2). Pure value; an absent or empty name removes it.
public struct RoomNameContent: Sendable, Equatable, Codable {
    public var name: String?
    public init(name: String?) { self.name = name }
}

/// Content of `m.room.topic` (spec §11.2.3). Pure value.
public struct RoomTopicContent: Sendable, Equatable, Codable {
    public var topic: String?
    public init(topic: String?) { self.topic = topic }
}

/// Content of `m.room.avatar` (spec §11.2.4). Pure value; no `url` removes the avatar.
public struct RoomAvatarContent: Sendable, Equatable, Codable {
    /// The `mxc://` URI of the image.
    public var url: String?
    public var info: MediaInfo?
    public init(url: String?, info: MediaInfo? = nil) {
        self.url = url
        self.info = info
    }
}

/// Content of `m.room.tombstone`: the room was upgraded and lives on in another (spec §11.32). Pure value.
public struct TombstoneContent: Sendable, Equatable, Codable {
    /// A message for users of the old room.
    public var body: String?
    /// The room that replaces this one.
    public var replacementRoom: RoomID

    public init(body: String?, replacementRoom: RoomID) {
        self.body = body
        self.replacementRoom = replacementRoom
    }

    enum CodingKeys: String, CodingKey {
        case body
        case replacementRoom = "replacement_room"
    }
}
