/// The secrets of one encrypted attachment (spec v1.11 §11.12.4.5, "Sending encrypted attachments"): the AES-256-CTR
/// `key` (32 bytes), the initial counter block `iv` (16 bytes) and the SHA-256 of the ciphertext. Pure value;
/// `Codable` so that a queued Matrix file keeps them (they are as secret as the file itself).
public struct AttachmentKeys: Sendable, Equatable, Codable {
    public var key: [UInt8]
    public var iv: [UInt8]
    public var sha256: [UInt8]

    public init(key: [UInt8], iv: [UInt8], sha256: [UInt8]) {
        self.key = key
        self.iv = iv
        self.sha256 = sha256
    }

    /// AES-256's key, AES's counter block, SHA-256's digest.
    public static let keyLength = 32, ivLength = 16, hashLength = 32

    /// Whether the lengths are what AES-256-CTR and SHA-256 need (anything else came from a broken or hostile sender).
    public var isWellFormed: Bool { key.count == Self.keyLength && iv.count == Self.ivLength && sha256.count == Self.hashLength }
}

/// One attachment encrypted or decrypted as it streams: AES-256-CTR, with the SHA-256 of the ciphertext taken on the
/// way. Encrypting makes a fresh key and a counter block whose first 8 bytes are random and last 8 zero (the spec's
/// advice: the counter never wraps within 2^64 blocks); decrypting checks the hash at the end — the caller must not
/// hand out the last piece of plaintext before ``verify()`` says yes. Not thread-safe: one transfer's thread.
public final class AttachmentCipher: @unchecked Sendable {
    private let stream: CTRStream
    private let key: [UInt8]
    private let iv: [UInt8]
    private let expected: [UInt8]?
    private var digest: [UInt8]?

    /// Encrypts a new attachment under fresh secrets.
    public static func encrypting() -> AttachmentCipher {
        let key = CryptoPrimitives.randomBytes(AttachmentKeys.keyLength)
        // The spec's advice: 64 random bits, then a 64-bit counter from zero.
        let iv = CryptoPrimitives.randomBytes(AttachmentKeys.ivLength / 2) + [UInt8](repeating: 0, count: AttachmentKeys.ivLength / 2)
        // The lengths are right by construction.
        return try! AttachmentCipher(key: key, iv: iv, expected: nil)
    }

    /// Decrypts the attachment `keys` describe; throws when their lengths are wrong.
    public static func decrypting(_ keys: AttachmentKeys) throws -> AttachmentCipher {
        guard keys.sha256.count == AttachmentKeys.hashLength else {
            throw MatrixCryptoError.invalidLength(kind: "SHA-256 hash", expected: AttachmentKeys.hashLength, actual: keys.sha256.count)
        }
        return try AttachmentCipher(key: keys.key, iv: keys.iv, expected: keys.sha256)
    }

    private init(key: [UInt8], iv: [UInt8], expected: [UInt8]?) throws {
        stream = try CTRStream(key: key, iv: iv, encrypting: expected == nil)
        self.key = key
        self.iv = iv
        self.expected = expected
    }

    /// The next piece transformed (the same length).
    public func update(_ piece: UnsafeRawBufferPointer) -> [UInt8] { stream.update(piece) }

    /// The next piece transformed.
    public func update(_ piece: [UInt8]) -> [UInt8] { piece.withUnsafeBytes { stream.update($0) } }

    /// Encrypting: the secrets to send with the ciphertext, once all of it went through ``update(_:)``.
    public func finishEncrypting() -> AttachmentKeys {
        AttachmentKeys(key: key, iv: iv, sha256: finalDigest())
    }

    /// Decrypting: whether the ciphertext that went through ``update(_:)`` is the one the sender hashed (compared in
    /// constant time). Call once everything went through.
    public func verify() -> Bool {
        guard let expected else { return false }
        return CryptoPrimitives.constantTimeEqual(finalDigest(), expected)
    }

    private func finalDigest() -> [UInt8] {
        if let digest { return digest }
        let value = stream.finish()
        digest = value
        return value
    }
}
