/// The key of a Megolm session as its sender shares it in `m.room_key` (`session_key`; Megolm spec, "Session sharing
/// format"): version 2, the index (4 bytes, big-endian), the 128-byte ratchet, the session's Ed25519 public key, and
/// the session's signature over all of that. Pure value; it is a secret.
public struct MegolmSessionKey: Sendable, Equatable {
    static let version: UInt8 = 2
    static let length = 1 + 4 + MegolmRatchet.length + 32 + 64
    static let kind = "Megolm session key"

    /// The ratchet at the session's first index.
    let ratchet: MegolmRatchet
    /// The session's signing key (its id).
    public let signingKey: Ed25519PublicKey
    /// The signature of the other fields.
    let signature: Ed25519Signature

    /// The key of `ratchet`, signed by `signingKey`.
    init(ratchet: MegolmRatchet, signingKey: Ed25519SecretKey) {
        self.ratchet = ratchet
        self.signingKey = signingKey.publicKey
        signature = signingKey.sign(Self.signedPart(ratchet: ratchet, key: signingKey.publicKey))
    }

    /// Parses a session key and checks its signature: `badSignature` when it was not made by the key it carries.
    public init(bytes: [UInt8]) throws {
        (ratchet, signingKey) = try MegolmKeyHeader.parse(bytes, length: Self.length, version: Self.version, kind: Self.kind)
        signature = try Ed25519Signature(bytes: Array(bytes[165...]))
        try signingKey.verify(signature, of: Array(bytes[0..<165]))
    }

    /// Parses the unpadded base64 of a session key (the `session_key` of `m.room_key`).
    public init(base64: String) throws {
        try self.init(bytes: UnpaddedBase64.decode(base64))
    }

    /// The index of the first message this key decrypts.
    public var firstIndex: UInt32 { ratchet.index }

    /// The serialized key.
    public var bytes: [UInt8] { Self.signedPart(ratchet: ratchet, key: signingKey) + signature.bytes }

    /// The unpadded base64 form.
    public var base64: String { UnpaddedBase64.encode(bytes) }

    private static func signedPart(ratchet: MegolmRatchet, key: Ed25519PublicKey) -> [UInt8] {
        [version] + bigEndian(ratchet.index) + ratchet.data + key.bytes
    }
}

/// The key of a Megolm session as exported for backups, key exports and `m.forwarded_room_key` (Megolm spec,
/// "Session export format"): version 1, the index (4 bytes, big-endian), the 128-byte ratchet and the session's
/// Ed25519 public key, unsigned. Pure value; it is a secret.
public struct MegolmExportedSessionKey: Sendable, Equatable {
    static let version: UInt8 = 1
    static let length = 1 + 4 + MegolmRatchet.length + 32
    static let kind = "Megolm exported session key"

    /// The ratchet at the exported index.
    let ratchet: MegolmRatchet
    /// The session's signing key (its id).
    public let signingKey: Ed25519PublicKey

    init(ratchet: MegolmRatchet, signingKey: Ed25519PublicKey) {
        self.ratchet = ratchet
        self.signingKey = signingKey
    }

    /// Parses an exported key.
    public init(bytes: [UInt8]) throws {
        (ratchet, signingKey) = try MegolmKeyHeader.parse(bytes, length: Self.length, version: Self.version, kind: Self.kind)
    }

    /// Parses the unpadded base64 of an exported key (`session_key` of a key export or forwarded key).
    public init(base64: String) throws {
        try self.init(bytes: UnpaddedBase64.decode(base64))
    }

    /// The index of the first message this key decrypts.
    public var firstIndex: UInt32 { ratchet.index }

    /// The serialized key.
    public var bytes: [UInt8] { [Self.version] + bigEndian(ratchet.index) + ratchet.data + signingKey.bytes }

    /// The unpadded base64 form.
    public var base64: String { UnpaddedBase64.encode(bytes) }
}

/// `value` as 4 big-endian bytes.
func bigEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
}

/// What both forms of a Megolm session key start with: the version byte, the index (4 bytes, big-endian), the 128-byte
/// ratchet and the session's Ed25519 public key.
enum MegolmKeyHeader {
    /// Checks `bytes`' length and version and reads the ratchet and the signing key.
    static func parse(_ bytes: [UInt8], length: Int, version: UInt8, kind: String) throws -> (MegolmRatchet, Ed25519PublicKey) {
        guard bytes.count == length else {
            throw MatrixCryptoError.malformedMessage(kind: kind, reason: "\(bytes.count) bytes, not \(length)")
        }
        guard bytes[0] == version else { throw MatrixCryptoError.unsupportedVersion(kind: kind, version: bytes[0]) }
        let index = bytes[1..<5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return (try MegolmRatchet(data: Array(bytes[5..<133]), index: index), try Ed25519PublicKey(bytes: Array(bytes[133..<165])))
    }
}
