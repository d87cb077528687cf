import IsthmusCommon

/// The `id` attribute of a stanza (RFC 6120 §8.1.3): chosen by the sender, echoed in IQ responses and — by MUC rooms —
/// in the reflection of a groupchat message. Not to be confused with ``StanzaID`` (XEP-0359, assigned by the room).
public struct StanzaAttributeID: Sendable, Hashable, Codable, CustomStringConvertible, LosslessStringConvertible {
    /// The attribute's text.
    public let rawValue: String

    /// Any non-empty string of at most 1024 bytes.
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

    public var description: String { rawValue }

    private init(validated: String) { rawValue = validated }
}
