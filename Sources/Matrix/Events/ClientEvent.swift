import IsthmusCommon

/// A room event as the homeserver pushes it in an appservice transaction (spec "Client-Server API §9.1
/// Room event format", `ClientEvent`). Pure value; `Codable` both ways.
///
/// The envelope fields are required; `content` is typed by ``type`` (see ``EventContent``). Unknown fields are ignored.
public struct ClientEvent: Sendable, Equatable, Codable {
    public var type: String
    public var eventID: EventID
    public var roomID: RoomID
    public var sender: UserID
    /// Set for state events (possibly empty).
    public var stateKey: String?
    /// Milliseconds since the Unix epoch on the sender's homeserver.
    public var originServerTS: Int64
    public var unsigned: UnsignedData?
    public var content: EventContent
    /// Top-level `redacts` of redactions in room versions before 11.
    public var redacts: EventID?

    public init(type: String, eventID: EventID, roomID: RoomID, sender: UserID, stateKey: String? = nil,
                originServerTS: Int64, unsigned: UnsignedData? = nil, content: EventContent, redacts: EventID? = nil) {
        self.type = type
        self.eventID = eventID
        self.roomID = roomID
        self.sender = sender
        self.stateKey = stateKey
        self.originServerTS = originServerTS
        self.unsigned = unsigned
        self.content = content
        self.redacts = redacts
    }

    /// Whether this is a state event.
    public var isState: Bool { stateKey != nil }

    /// For `m.room.member`: the user whose membership changes (the state key), when it is a valid user id.
    public var memberUserID: UserID? { type == MatrixEventType.member ? stateKey.flatMap(UserID.init) : nil }

    /// For `m.room.redaction`: the redacted event, from the content (v11+) or the top level (older rooms).
    public var redactedEventID: EventID? {
        if case .redaction(let content) = content, let target = content.redacts { return target }
        return type == MatrixEventType.redaction ? redacts : nil
    }

    enum CodingKeys: String, CodingKey {
        case type
        case eventID = "event_id"
        case roomID = "room_id"
        case sender
        case stateKey = "state_key"
        case originServerTS = "origin_server_ts"
        case unsigned, content, redacts
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(String.self, forKey: .type)
        eventID = try container.decode(EventID.self, forKey: .eventID)
        roomID = try container.decode(RoomID.self, forKey: .roomID)
        sender = try container.decode(UserID.self, forKey: .sender)
        stateKey = try container.decodeIfPresent(String.self, forKey: .stateKey)
        originServerTS = try container.decode(Int64.self, forKey: .originServerTS)
        unsigned = try? container.decodeIfPresent(UnsignedData.self, forKey: .unsigned)
        redacts = try? container.decodeIfPresent(EventID.self, forKey: .redacts)
        content = try EventContent.decode(type: type, from: container, key: .content)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(eventID, forKey: .eventID)
        try container.encode(roomID, forKey: .roomID)
        try container.encode(sender, forKey: .sender)
        try container.encodeIfPresent(stateKey, forKey: .stateKey)
        try container.encode(originServerTS, forKey: .originServerTS)
        try container.encodeIfPresent(unsigned, forKey: .unsigned)
        try container.encodeIfPresent(redacts, forKey: .redacts)
        try content.encode(to: &container, key: .content)
    }
}
