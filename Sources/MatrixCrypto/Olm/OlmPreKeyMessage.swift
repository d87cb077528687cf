/// An Olm message of type 0 (Olm spec, "Pre-key message format"; libolm `message.cpp`), which the initiator of a
/// session sends until it has received a reply: version 3, field 1 the recipient's one-time key, field 2 the
/// initiator's base key, field 3 the initiator's identity key, field 4 a normal message. It has no MAC of its own;
/// the keys are authenticated by the shared secret they produce. Pure value.
public struct OlmPreKeyMessage: Sendable, Hashable {
    static let version: UInt8 = 3
    static let kind = "Olm pre-key message"

    /// The serialized message.
    public let bytes: [UInt8]
    /// The keys that identify the session it starts.
    public let sessionKeys: OlmSessionKeys
    /// The enclosed normal message.
    public let message: OlmNormalMessage

    /// Parses a serialized pre-key message and its enclosed message.
    public init(bytes: [UInt8]) throws {
        guard bytes.count > 1 else { throw MatrixCryptoError.malformedMessage(kind: Self.kind, reason: "empty") }
        guard bytes[0] == Self.version else { throw MatrixCryptoError.unsupportedVersion(kind: Self.kind, version: bytes[0]) }
        let fields = try WireFields.parse(bytes[1...], kind: Self.kind)
        sessionKeys = OlmSessionKeys(
            identityKey: try Curve25519PublicKey(bytes: fields.bytes(3, length: 32, name: "identity key", kind: Self.kind)),
            baseKey: try Curve25519PublicKey(bytes: fields.bytes(2, length: 32, name: "base key", kind: Self.kind)),
            oneTimeKey: try Curve25519PublicKey(bytes: fields.bytes(1, length: 32, name: "one-time key", kind: Self.kind)))
        message = try OlmNormalMessage(bytes: fields.bytes(4, name: "message", kind: Self.kind))
        self.bytes = bytes
    }

    /// Wraps `message` with the keys of its session.
    init(sessionKeys: OlmSessionKeys, message: OlmNormalMessage) {
        var bytes = [Self.version]
        WireFields.appendBytes(1, sessionKeys.oneTimeKey.bytes, to: &bytes)
        WireFields.appendBytes(2, sessionKeys.baseKey.bytes, to: &bytes)
        WireFields.appendBytes(3, sessionKeys.identityKey.bytes, to: &bytes)
        WireFields.appendBytes(4, message.bytes, to: &bytes)
        self.bytes = bytes
        self.sessionKeys = sessionKeys
        self.message = message
    }

    /// The id of the session this message starts (or belongs to).
    public var sessionID: String { sessionKeys.sessionID }
}

/// The three public keys an Olm session is built from (Olm spec, "Initial setup"): the initiator's identity key and
/// base key, and the recipient's one-time (or fallback) key. Pure value.
public struct OlmSessionKeys: Sendable, Hashable {
    /// The initiator's Curve25519 identity key (I_A).
    public let identityKey: Curve25519PublicKey
    /// The initiator's ephemeral base key (E_A).
    public let baseKey: Curve25519PublicKey
    /// The recipient's one-time key (E_B).
    public let oneTimeKey: Curve25519PublicKey

    /// The session id, as libolm and vodozemac compute it: the unpadded base64 of SHA-256(I_A ‖ E_A ‖ E_B).
    public var sessionID: String {
        UnpaddedBase64.encode(CryptoPrimitives.sha256(identityKey.bytes + baseKey.bytes + oneTimeKey.bytes))
    }
}
