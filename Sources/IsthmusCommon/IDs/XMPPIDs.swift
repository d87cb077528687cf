/// A stanza id assigned by a room or archive (XEP-0359 `<stanza-id id by>`), the key of MUC history.
public struct StanzaID: StringIdentifier {
    public let rawValue: String
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 1024 else { return nil }
        rawValue = text
    }
}

/// A sender-chosen id (XEP-0359 `<origin-id id>`), passed through by the room unchanged.
public struct OriginID: StringIdentifier {
    public let rawValue: String
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 1024 else { return nil }
        rawValue = text
    }
}

/// A stable per-room id of a real user (XEP-0421 `<occupant-id id>`), added by the MUC.
public struct OccupantID: StringIdentifier {
    public let rawValue: String
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 1024 else { return nil }
        rawValue = text
    }
}

/// The `id` attribute a sender gave a message (RFC 6120 §8.1.3). Not unique across a room's occupants: look it up
/// only together with the sender (XEP-0308 corrections name the original this way).
public struct MessageIDAttribute: StringIdentifier {
    public let rawValue: String
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 1024 else { return nil }
        rawValue = text
    }
}
