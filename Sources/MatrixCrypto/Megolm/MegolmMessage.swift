/// A Megolm message as it travels (base64 in `m.room.encrypted`'s `ciphertext`; Megolm spec, "Message format"):
/// version 3, field 1 the message index (varint), field 2 the AES-CBC ciphertext, then an 8-byte truncated MAC over
/// everything before it, then a 64-byte Ed25519 signature by the session's key over everything before it. Pure value.
public struct MegolmMessage: Sendable, Hashable {
    /// The version byte libolm and vodozemac write.
    static let version: UInt8 = 3
    static let kind = "Megolm message"

    /// The serialized message.
    public let bytes: [UInt8]
    /// The ratchet index it was encrypted at.
    public let messageIndex: UInt32
    /// The AES-CBC ciphertext.
    let ciphertext: [UInt8]

    /// Parses a serialized message: checks the version and the fields, not the MAC or signature (the session does).
    public init(bytes: [UInt8]) throws {
        let trailer = MessageCipher.macLength + 64
        guard bytes.count > 1 + trailer else {
            throw MatrixCryptoError.malformedMessage(kind: Self.kind, reason: "only \(bytes.count) bytes")
        }
        guard bytes[0] == Self.version else {
            throw MatrixCryptoError.unsupportedVersion(kind: Self.kind, version: bytes[0])
        }
        let fields = try WireFields.parse(bytes[1..<bytes.count - trailer], kind: Self.kind)
        messageIndex = try fields.uint32(1, name: "message index", kind: Self.kind)
        ciphertext = try fields.bytes(2, name: "ciphertext", kind: Self.kind)
        self.bytes = bytes
    }

    /// Parses the unpadded base64 of a message.
    public init(base64: String) throws {
        try self.init(bytes: UnpaddedBase64.decode(base64))
    }

    /// The unpadded base64 form, for `m.room.encrypted`.
    public var base64: String { UnpaddedBase64.encode(bytes) }

    /// Everything the MAC covers.
    var authenticatedBytes: [UInt8] { Array(bytes.dropLast(MessageCipher.macLength + 64)) }
    /// The truncated MAC.
    var mac: [UInt8] { Array(bytes.dropLast(64).suffix(MessageCipher.macLength)) }
    /// Everything the signature covers (the message with its MAC).
    var signedBytes: [UInt8] { Array(bytes.dropLast(64)) }
    /// The signature.
    var signature: Ed25519Signature { try! Ed25519Signature(bytes: Array(bytes.suffix(64))) }

    /// Encrypts `plaintext` at `ratchet`'s index and signs it with `signingKey`.
    static func encrypt(_ plaintext: [UInt8], ratchet: MegolmRatchet, signingKey: Ed25519SecretKey) -> MegolmMessage {
        let cipher = ratchet.cipher
        var bytes = [version]
        WireFields.appendInteger(1, UInt64(ratchet.index), to: &bytes)
        WireFields.appendBytes(2, cipher.encrypt(plaintext), to: &bytes)
        bytes += cipher.mac(bytes)
        bytes += signingKey.sign(bytes).bytes
        return try! MegolmMessage(bytes: bytes)
    }
}
