import IsthmusCommon

/// The `unsigned` part of an event: data the homeserver adds, not covered by signatures. Pure value.
///
/// Only the fields the bridge reads are typed; anything else is ignored when decoding.
public struct UnsignedData: Sendable, Equatable, Codable {
    /// Milliseconds since the event was sent, as the homeserver saw it.
    public var age: Int64?
    /// The sender's transaction id — present only for the sender's own events (echo detection).
    public var transactionID: String?
    /// The previous content of a state event.
    public var previousContent: JSONValue?
    /// The redaction that removed this event's content, if any.
    public var redactedBecause: JSONValue?
    /// For an invite: the room's state the invitee may see before joining (stripped events: `type`, `state_key`,
    /// `content`, `sender`), when the homeserver adds it (Synapse does, with `m.room.encryption` among its defaults).
    public var inviteRoomState: [JSONValue]?

    public init(age: Int64? = nil, transactionID: String? = nil, previousContent: JSONValue? = nil, redactedBecause: JSONValue? = nil,
                inviteRoomState: [JSONValue]? = nil) {
        self.inviteRoomState = inviteRoomState
        self.age = age
        self.transactionID = transactionID
        self.previousContent = previousContent
        self.redactedBecause = redactedBecause
    }

    enum CodingKeys: String, CodingKey {
        case age
        case transactionID = "transaction_id"
        case previousContent = "prev_content"
        case redactedBecause = "redacted_because"
        case inviteRoomState = "invite_room_state"
    }
}
