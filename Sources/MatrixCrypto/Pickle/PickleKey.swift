/// The 32-byte key that seals pickles (from the bridge's config or its secret store). Records are sealed with
/// AES-256-GCM under a fresh random 12-byte nonce each, so one key can seal any number of them; the record's kind is
/// authenticated too, so a record of one kind never opens as another. Pure value.
///
/// Isthmus's pickles are its own versioned format, not libolm's: OpenSSL's Ed25519 keeps the 32-byte seed where
/// libolm pickles hold the 64-byte expanded key, and libolm's pickle cipher derives its IV from the key alone.
public struct PickleKey: Sendable {
    /// Sealed record layout version (the first byte of every record).
    static let formatVersion: UInt8 = 1

    private let bytes: [UInt8]

    /// A key of exactly 32 bytes.
    public init(bytes: [UInt8]) throws {
        guard bytes.count == 32 else { throw MatrixCryptoError.invalidLength(kind: "pickle key", expected: 32, actual: bytes.count) }
        self.bytes = bytes
    }

    /// The key of an operator's secret (`encryption.pickle_key`, any length, any text): HKDF-SHA-256 of its UTF-8
    /// bytes with a fixed info, so the same secret always gives the same key. The config asks for at least 32
    /// characters; a random one (`openssl rand -base64 32`) carries 256 bits.
    public init(secret: String) {
        bytes = CryptoPrimitives.hkdfSHA256(inputKey: Array(secret.utf8), salt: [], info: Array("isthmus pickle key".utf8), length: 32)
    }

    /// A fresh random key.
    public static func random() -> PickleKey {
        try! PickleKey(bytes: CryptoPrimitives.randomBytes(32))
    }

    /// `plain` sealed: version ‖ nonce (12) ‖ AES-256-GCM ciphertext ‖ tag (16), the kind and version authenticated.
    func seal(_ plain: [UInt8], kind: String) -> [UInt8] {
        let nonce = CryptoPrimitives.randomBytes(12)
        // Cannot fail: key and nonce lengths are fixed.
        let sealed = try! CryptoPrimitives.aes256GCMSeal(key: bytes, nonce: nonce, plaintext: plain,
                                                         associatedData: Self.associatedData(kind))
        return [Self.formatVersion] + nonce + sealed
    }

    /// Opens a record sealed by `seal` with the same kind; `pickleNotAuthentic` for a wrong key, altered bytes or
    /// another kind, `unsupportedVersion` for a layout this code does not know.
    func open(_ record: [UInt8], kind: String) throws -> [UInt8] {
        guard let version = record.first else { throw MatrixCryptoError.malformedPickle(kind: kind, reason: "empty record") }
        guard version == Self.formatVersion else { throw MatrixCryptoError.unsupportedVersion(kind: "\(kind) pickle", version: version) }
        guard record.count >= 1 + 12 + 16 else { throw MatrixCryptoError.pickleNotAuthentic(kind: kind) }
        guard let plain = try CryptoPrimitives.aes256GCMOpen(key: bytes, nonce: Array(record[1..<13]), sealed: Array(record[13...]),
                                                             associatedData: Self.associatedData(kind))
        else { throw MatrixCryptoError.pickleNotAuthentic(kind: kind) }
        return plain
    }

    private static func associatedData(_ kind: String) -> [UInt8] {
        Array("isthmus.matrix-crypto.\(kind)".utf8) + [formatVersion]
    }
}
