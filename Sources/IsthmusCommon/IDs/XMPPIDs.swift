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
