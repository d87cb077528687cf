import IsthmusCommon

/// `m.relates_to` of an event's content: edits, reactions, threads and replies (spec §11.10, §11.19 "Rich replies").
/// Pure value; unknown relation fields are ignored.
public struct RelatesTo: Sendable, Equatable, Codable {
    /// `m.in_reply_to` — the event a message answers.
    public struct InReplyTo: Sendable, Equatable, Codable {
        public var eventID: EventID

        public init(eventID: EventID) { self.eventID = eventID }

        enum CodingKeys: String, CodingKey { case eventID = "event_id" }
    }

    /// `rel_type`, e.g. ``MatrixRelationType/replace``; nil for a plain reply.
    public var relationType: String?
    /// The related event (the original of an edit, the target of a reaction, the thread root).
    public var eventID: EventID?
    /// The annotation key (the reaction's emoji).
    public var key: String?
    /// The event replied to.
    public var inReplyTo: InReplyTo?
    /// For threads: whether `m.in_reply_to` is only a fallback for clients without thread support.
    public var isFallingBack: Bool?

    public init(relationType: String? = nil, eventID: EventID? = nil, key: String? = nil, inReplyTo: EventID? = nil, isFallingBack: Bool? = nil) {
        self.relationType = relationType
        self.eventID = eventID
        self.key = key
        self.inReplyTo = inReplyTo.map(InReplyTo.init(eventID:))
        self.isFallingBack = isFallingBack
    }

    /// An edit of `original` (`rel_type: m.replace`).
    public static func replacing(_ original: EventID) -> RelatesTo {
        RelatesTo(relationType: MatrixRelationType.replace, eventID: original)
    }

    /// A reply to `event` (`m.in_reply_to`).
    public static func reply(to event: EventID) -> RelatesTo {
        RelatesTo(inReplyTo: event)
    }

    /// A reaction `key` on `event` (`rel_type: m.annotation`).
    public static func annotation(_ event: EventID, key: String) -> RelatesTo {
        RelatesTo(relationType: MatrixRelationType.annotation, eventID: event, key: key)
    }

    /// The edited event when this is an `m.replace` relation.
    public var replacedEventID: EventID? { relationType == MatrixRelationType.replace ? eventID : nil }

    /// The event answered, unless this is only a thread fallback.
    public var replyToEventID: EventID? { isFallingBack == true ? nil : inReplyTo?.eventID }

    enum CodingKeys: String, CodingKey {
        case relationType = "rel_type"
        case eventID = "event_id"
        case key
        case inReplyTo = "m.in_reply_to"
        case isFallingBack = "is_falling_back"
    }
}
