/// A Curve25519 public key (32 bytes): an Olm identity key, one-time key, base key or ratchet key. Pure value.
public struct Curve25519PublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The 32 raw bytes (RFC 7748 u-coordinate, little-endian).
    public let bytes: [UInt8]

    /// A key from its 32 raw bytes; throws `invalidLength` otherwise.
    public init(bytes: [UInt8]) throws {
        guard bytes.count == 32 else {
            throw MatrixCryptoError.invalidLength(kind: "Curve25519 public key", expected: 32, actual: bytes.count)
        }
        self.bytes = bytes
    }

    /// A key from its unpadded base64 form, as Matrix publishes it (`keys.curve25519:DEVICE`, one-time keys).
    public init(base64: String) throws {
        try self.init(bytes: UnpaddedBase64.decode(base64))
    }

    /// The unpadded base64 form.
    public var base64: String { UnpaddedBase64.encode(bytes) }

    public var description: String { base64 }
}

/// A Curve25519 private key (32 random bytes) and its public key. Pure value; compared in constant time.
public struct Curve25519SecretKey: Sendable, Equatable {
    /// The 32 private bytes (clamped by X25519 when used).
    let bytes: [UInt8]
    /// The matching public key.
    public let publicKey: Curve25519PublicKey

    /// A fresh key from OpenSSL's random generator.
    public init() {
        try! self.init(bytes: CryptoPrimitives.randomBytes(32))
    }

    /// The key of 32 private bytes (test vectors, pickles); throws `invalidLength` otherwise.
    public init(bytes: [UInt8]) throws {
        self.bytes = bytes
        publicKey = try Curve25519PublicKey(bytes: CryptoPrimitives.x25519PublicKey(privateKey: bytes))
    }

    /// X25519 of this key and `theirs` (32 bytes). Throws when `theirs` has low order (the result would be zero).
    public func diffieHellman(with theirs: Curve25519PublicKey) throws -> [UInt8] {
        try CryptoPrimitives.x25519(privateKey: bytes, publicKey: theirs.bytes)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        CryptoPrimitives.constantTimeEqual(lhs.bytes, rhs.bytes)
    }
}
