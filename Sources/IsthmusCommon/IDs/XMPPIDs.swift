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

/// The `id` attribute of a stanza (RFC 6120 §8.1.3): chosen by the sender, echoed in IQ responses and — by MUC rooms —
/// in the reflection of a groupchat message. Not unique across a room's occupants: look a message up by it only
/// together with its sender (XEP-0308 corrections name the original this way). Not to be confused with ``StanzaID``
/// (XEP-0359, assigned by the room).
public struct StanzaAttributeID: StringIdentifier {
    public let rawValue: String
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 1024 else { return nil }
        rawValue = text
    }

    /// A fresh random id (16 hex digits from OpenSSL's CSPRNG). Safe from any thread.
    public static func random() -> StanzaAttributeID {
        StanzaAttributeID(validated: Digest.randomHex(bytes: 8))
    }

    /// The same text as an XEP-0359 origin id (we send `id` == `origin-id` on groupchat messages).
    public var originID: OriginID? { OriginID(rawValue) }

    private init(validated: String) { rawValue = validated }
}
