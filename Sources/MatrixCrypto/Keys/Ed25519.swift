/// An Ed25519 public key (32 bytes): a device's fingerprint key, a Megolm session's signing key. Pure value.
public struct Ed25519PublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The 32 raw bytes (RFC 8032 encoding).
    public let bytes: [UInt8]

    /// A key from its 32 raw bytes; throws `invalidLength` otherwise. The point itself is checked when verifying.
    public init(bytes: [UInt8]) throws {
        guard bytes.count == 32 else {
            throw MatrixCryptoError.invalidLength(kind: "Ed25519 public key", expected: 32, actual: bytes.count)
        }
        self.bytes = bytes
    }

    /// A key from its unpadded base64 form (`keys.ed25519:DEVICE`, a Megolm session id).
    public init(base64: String) throws {
        try self.init(bytes: UnpaddedBase64.decode(base64))
    }

    /// The unpadded base64 form.
    public var base64: String { UnpaddedBase64.encode(bytes) }

    public var description: String { base64 }

    /// Whether `signature` is this key's signature of `message`.
    public func isValidSignature(_ signature: Ed25519Signature, of message: [UInt8]) -> Bool {
        CryptoPrimitives.ed25519Verify(publicKey: bytes, message: message, signature: signature.bytes)
    }

    /// Throws `badSignature` unless `signature` is this key's signature of `message`.
    public func verify(_ signature: Ed25519Signature, of message: [UInt8]) throws {
        guard isValidSignature(signature, of: message) else { throw MatrixCryptoError.badSignature }
    }
}

/// An Ed25519 signature (64 bytes). Pure value.
public struct Ed25519Signature: Sendable, Hashable, CustomStringConvertible {
    /// The 64 raw bytes (R ‖ S).
    public let bytes: [UInt8]

    /// A signature from its 64 raw bytes; throws `invalidLength` otherwise.
    public init(bytes: [UInt8]) throws {
        guard bytes.count == 64 else {
            throw MatrixCryptoError.invalidLength(kind: "Ed25519 signature", expected: 64, actual: bytes.count)
        }
        self.bytes = bytes
    }

    /// A signature from its unpadded base64 form, as the `signatures` of signed JSON hold it.
    public init(base64: String) throws {
        try self.init(bytes: UnpaddedBase64.decode(base64))
    }

    /// The unpadded base64 form.
    public var base64: String { UnpaddedBase64.encode(bytes) }

    public var description: String { base64 }
}

/// An Ed25519 signing key, kept as its 32-byte seed (RFC 8032 §5.1.5), with its public key. Pure value; compared in
/// constant time.
///
/// OpenSSL takes the seed, not the 64-byte expanded key that libolm stores in its pickles; that is one reason Isthmus
/// does not read libolm pickles.
public struct Ed25519SecretKey: Sendable, Equatable {
    /// The 32-byte seed.
    let seed: [UInt8]
    /// The matching public key.
    public let publicKey: Ed25519PublicKey

    /// A fresh key from OpenSSL's random generator.
    public init() {
        try! self.init(seed: CryptoPrimitives.randomBytes(32))
    }

    /// The key of a 32-byte seed (test vectors, pickles); throws `invalidLength` otherwise.
    public init(seed: [UInt8]) throws {
        self.seed = seed
        publicKey = try Ed25519PublicKey(bytes: CryptoPrimitives.ed25519PublicKey(seed: seed))
    }

    /// The deterministic signature of `message`.
    public func sign(_ message: [UInt8]) -> Ed25519Signature {
        // Cannot fail: the seed's length was checked at init and OpenSSL signs any message.
        try! Ed25519Signature(bytes: CryptoPrimitives.ed25519Sign(seed: seed, message: message))
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        CryptoPrimitives.constantTimeEqual(lhs.seed, rhs.seed)
    }
}
