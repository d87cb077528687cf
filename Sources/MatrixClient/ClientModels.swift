import IsthmusCommon
import Matrix

/// The result of registering a ghost.
public enum GhostRegistration: Sendable, Equatable {
    /// The account was created now.
    case registered(UserID)
    /// It existed already (`M_USER_IN_USE`) — just as good.
    case alreadyRegistered(UserID)

    public var userID: UserID {
        switch self {
        case .registered(let user), .alreadyRegistered(let user): user
        }
    }
}

/// A joined member's room profile from `/joined_members`.
public struct RoomMemberProfile: Sendable, Equatable, Decodable {
    public var displayName: String?
    public var avatarURL: String?

    public init(displayName: String?, avatarURL: String?) {
        self.displayName = displayName
        self.avatarURL = avatarURL
    }

    enum CodingKeys: String, CodingKey {
        case displayName = "display_name"
        case avatarURL = "avatar_url"
    }
}

/// A room alias resolved by the directory (`GET /directory/room/{roomAlias}`).
public struct ResolvedAlias: Sendable, Equatable, Decodable {
    public var roomID: RoomID
    public var servers: [String]

    enum CodingKeys: String, CodingKey {
        case roomID = "room_id"
        case servers
    }
}

/// The body of `POST /createRoom` (client-server API §10.1.1). Only the fields Isthmus sets; nil fields are omitted.
public struct CreateRoomRequest: Sendable, Equatable, Encodable {
    public var preset: String?
    public var visibility: String?
    public var name: String?
    public var topic: String?
    /// The localpart of an alias to create (`#<roomAliasName>:<server>`).
    public var roomAliasName: String?
    public var invite: [UserID]?
    public var isDirect: Bool?
    public var roomVersion: String?
    public var powerLevelContentOverride: JSONValue?
    public var initialState: [InitialStateEvent]?

    /// One state event to create the room with.
    public struct InitialStateEvent: Sendable, Equatable, Encodable {
        public var type: String
        public var stateKey: String
        public var content: JSONValue

        public init(type: String, stateKey: String = "", content: JSONValue) {
            self.type = type
            self.stateKey = stateKey
            self.content = content
        }

        enum CodingKeys: String, CodingKey {
            case type
            case stateKey = "state_key"
            case content
        }
    }

    public init(preset: String? = nil, visibility: String? = nil, name: String? = nil, topic: String? = nil,
                roomAliasName: String? = nil, invite: [UserID]? = nil, isDirect: Bool? = nil, roomVersion: String? = nil,
                powerLevelContentOverride: JSONValue? = nil, initialState: [InitialStateEvent]? = nil) {
        self.preset = preset
        self.visibility = visibility
        self.name = name
        self.topic = topic
        self.roomAliasName = roomAliasName
        self.invite = invite
        self.isDirect = isDirect
        self.roomVersion = roomVersion
        self.powerLevelContentOverride = powerLevelContentOverride
        self.initialState = initialState
    }

    enum CodingKeys: String, CodingKey {
        case preset, visibility, name, topic
        case roomAliasName = "room_alias_name"
        case invite
        case isDirect = "is_direct"
        case roomVersion = "room_version"
        case powerLevelContentOverride = "power_level_content_override"
        case initialState = "initial_state"
    }
}

/// Small response and request bodies shared by the client calls.
enum Bodies {
    struct Empty: Codable {}
    struct EventIDResponse: Decodable {
        var eventID: EventID
        enum CodingKeys: String, CodingKey { case eventID = "event_id" }
    }
    struct RoomIDResponse: Decodable {
        var roomID: RoomID
        enum CodingKeys: String, CodingKey { case roomID = "room_id" }
    }
    struct UserIDResponse: Decodable {
        var userID: UserID
        enum CodingKeys: String, CodingKey { case userID = "user_id" }
    }
    struct Reason: Encodable {
        var reason: String?
    }
    struct Target: Encodable {
        var userID: UserID
        var reason: String?
        enum CodingKeys: String, CodingKey {
            case userID = "user_id"
            case reason
        }
    }
}
