import IsthmusCommon

/// Content of `m.room.redaction` (spec §11.8 "Redactions"). Pure value.
///
/// Since room version 11 `redacts` lives in the content; older rooms put it at the top of the event
/// (``ClientEvent/redactedEventID`` reads both).
public struct RedactionContent: Sendable, Equatable, Codable {
    public var redacts: EventID?
    public var reason: String?

    public init(redacts: EventID? = nil, reason: String? = nil) {
        self.redacts = redacts
        self.reason = reason
    }
}

/// Content of `m.reaction`: an `m.annotation` relation with the reaction key (spec §11.36). Pure value.
public struct ReactionContent: Sendable, Equatable, Codable {
    public var relatesTo: RelatesTo

    public init(relatesTo: RelatesTo) { self.relatesTo = relatesTo }

    /// A reaction `key` on `event`.
    public init(reactingTo event: EventID, key: String) { relatesTo = .annotation(event, key: key) }

    /// The event reacted to (when this is an annotation).
    public var targetEventID: EventID? { relatesTo.relationType == MatrixRelationType.annotation ? relatesTo.eventID : nil }
    /// The reaction key, usually an emoji.
    public var key: String? { relatesTo.key }

    enum CodingKeys: String, CodingKey { case relatesTo = "m.relates_to" }
}
