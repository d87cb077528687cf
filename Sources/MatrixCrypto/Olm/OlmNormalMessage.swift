/// An Olm message of type 1 (Olm spec, "Normal message format"; libolm `message.cpp`): version 3, field 1 the
/// sender's current ratchet key, field 2 the chain index (varint), field 4 the AES-CBC ciphertext, then an 8-byte
/// truncated MAC over everything before it. Also the payload of a pre-key message. Pure value.
public struct OlmNormalMessage: Sendable, Hashable {
    static let version: UInt8 = 3
    static let kind = "Olm message"

    /// The serialized message.
    public let bytes: [UInt8]
    /// The sender's ratchet key for this chain.
    let ratchetKey: Curve25519PublicKey
    /// The message's position in its chain.
    let chainIndex: UInt32
    /// The AES-CBC ciphertext.
    let ciphertext: [UInt8]

    /// Parses a serialized message (the MAC is checked when decrypting).
    public init(bytes: [UInt8]) throws {
        guard bytes.count > 1 + MessageCipher.macLength else {
            throw MatrixCryptoError.malformedMessage(kind: Self.kind, reason: "only \(bytes.count) bytes")
        }
        guard bytes[0] == Self.version else { throw MatrixCryptoError.unsupportedVersion(kind: Self.kind, version: bytes[0]) }
        let fields = try WireFields.parse(bytes[1..<bytes.count - MessageCipher.macLength], kind: Self.kind)
        ratchetKey = try Curve25519PublicKey(bytes: fields.bytes(1, length: 32, name: "ratchet key", kind: Self.kind))
        chainIndex = try fields.uint32(2, name: "chain index", kind: Self.kind)
        ciphertext = try fields.bytes(4, name: "ciphertext", kind: Self.kind)
        self.bytes = bytes
    }

    /// Everything the MAC covers.
    var authenticatedBytes: [UInt8] { Array(bytes.dropLast(MessageCipher.macLength)) }
    /// The truncated MAC.
    var mac: [UInt8] { Array(bytes.suffix(MessageCipher.macLength)) }

    /// Encrypts `plaintext` with `messageKey` as message `chainIndex` of the chain of `ratchetKey`.
    static func encrypt(_ plaintext: [UInt8], messageKey: [UInt8], ratchetKey: Curve25519PublicKey,
                        chainIndex: UInt32) -> OlmNormalMessage {
        let cipher = MessageCipher(messageKey: messageKey, info: MessageCipher.olmInfo)
        var bytes = [version]
        WireFields.appendBytes(1, ratchetKey.bytes, to: &bytes)
        WireFields.appendInteger(2, UInt64(chainIndex), to: &bytes)
        WireFields.appendBytes(4, cipher.encrypt(plaintext), to: &bytes)
        bytes += cipher.mac(bytes)
        return try! OlmNormalMessage(bytes: bytes)
    }

    /// Checks the MAC under `messageKey` and decrypts.
    func decrypt(messageKey: [UInt8]) throws -> [UInt8] {
        try MessageCipher(messageKey: messageKey, info: MessageCipher.olmInfo)
            .verifyAndDecrypt(message: authenticatedBytes, mac: mac, ciphertext: ciphertext)
    }
}
