/// An Olm message as `m.room.encrypted` (`m.olm.v1.curve25519-aes-sha2`) carries it: `type` 0 (pre-key) or 1
/// (normal) and `body`, the unpadded base64 of the serialized message. Pure value.
public enum OlmMessage: Sendable, Hashable {
    /// Type 0: what the initiator sends until it has decrypted a reply; it can start a session.
    case preKey(OlmPreKeyMessage)
    /// Type 1: every other message.
    case normal(OlmNormalMessage)

    /// The `type` of the ciphertext object.
    public var type: Int {
        switch self {
        case .preKey: 0
        case .normal: 1
        }
    }

    /// The serialized message.
    public var bytes: [UInt8] {
        switch self {
        case .preKey(let message): message.bytes
        case .normal(let message): message.bytes
        }
    }

    /// The `body` of the ciphertext object.
    public var body: String { UnpaddedBase64.encode(bytes) }

    /// Parses the `type` and `body` of a ciphertext object; an unknown type is `malformedMessage`.
    public init(type: Int, body: String) throws {
        let bytes = try UnpaddedBase64.decode(body)
        switch type {
        case 0: self = .preKey(try OlmPreKeyMessage(bytes: bytes))
        case 1: self = .normal(try OlmNormalMessage(bytes: bytes))
        default: throw MatrixCryptoError.malformedMessage(kind: "Olm message", reason: "unknown type \(type)")
        }
    }
}
