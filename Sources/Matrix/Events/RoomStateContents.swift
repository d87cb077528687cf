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

/// Content of `m.room.create`, as far as the bridge reads it: the room it replaces, after an upgrade (spec §11.32).
/// Pure value; other fields are ignored.
public struct RoomCreateContent: Sendable, Equatable, Codable {
    /// `predecessor`: the upgraded room (its `event_id` may be left out from room version 12 on).
    public struct Predecessor: Sendable, Equatable, Codable {
        public var roomID: RoomID
        public init(roomID: RoomID) { self.roomID = roomID }
        enum CodingKeys: String, CodingKey { case roomID = "room_id" }
    }
    public var predecessor: Predecessor?
    public init(predecessor: Predecessor?) { self.predecessor = predecessor }
}

extension RoomTopicContent {
    /// The content that sets `text` as the topic: `topic`, and the same text as `m.topic`'s plain-text
    /// representation (spec v1.15 `m.room.topic`).
    public static func plain(_ text: String) -> JSONValue {
        .object([
            "topic": .string(text),
            "m.topic": .object(["m.text": .array([.object(["mimetype": .string("text/plain"), "body": .string(text)])])]),
        ])
    }
}
