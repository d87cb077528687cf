private import COpenSSL

/// Hashes and secrets on OpenSSL's libcrypto. Pure functions; no I/O.
public enum Digest {
    /// A hash function that `hash`, `hmac` and `pbkdf2` can use.
    public enum Algorithm: Sendable, Hashable {
        case sha1, sha256

        /// Output length in bytes (20 for SHA-1, 32 for SHA-256).
        public var length: Int {
            switch self {
            case .sha1: Int(SHA_DIGEST_LENGTH)
            case .sha256: Int(SHA256_DIGEST_LENGTH)
            }
        }

        fileprivate var evp: OpaquePointer? {
            switch self {
            case .sha1: EVP_sha1()
            case .sha256: EVP_sha256()
            }
        }
    }

    /// `bytes` hashed with `algorithm`.
    public static func hash(_ algorithm: Algorithm, _ bytes: some Sequence<UInt8>) -> [UInt8] {
        switch algorithm {
        case .sha1: sha1(bytes)
        case .sha256: sha256(bytes)
        }
    }

    /// SHA-1 of `bytes` (used by the XEP-0114 handshake).
    public static func sha1(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        let input = Array(bytes)
        var output = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        input.withUnsafeBufferPointer { source in
            _ = COpenSSL.SHA1(source.baseAddress, source.count, &output)
        }
        return output
    }

    /// SHA-256 of `bytes` (used to derive stable ids from other ids).
    public static func sha256(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        let input = Array(bytes)
        var output = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        input.withUnsafeBufferPointer { source in
            _ = COpenSSL.SHA256(source.baseAddress, source.count, &output)
        }
        return output
    }

    /// HMAC of `message` under `key` with `algorithm` (RFC 2104).
    public static func hmac(_ algorithm: Algorithm, key: some Sequence<UInt8>, message: some Sequence<UInt8>) -> [UInt8] {
        let keyBytes = Array(key), input = Array(message)
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        keyBytes.withUnsafeBufferPointer { keyBuffer in
            input.withUnsafeBufferPointer { source in
                _ = COpenSSL.HMAC(algorithm.evp, keyBuffer.baseAddress, Int32(keyBuffer.count), source.baseAddress, source.count,
                                  &output, &length)
            }
        }
        return Array(output.prefix(Int(length)))
    }

    /// HMAC-SHA-1 of `message` under `key` (RFC 2104; SCRAM-SHA-1's HMAC).
    public static func hmacSHA1(key: some Sequence<UInt8>, message: some Sequence<UInt8>) -> [UInt8] {
        hmac(.sha1, key: key, message: message)
    }

    /// HMAC-SHA-256 of `message` under `key` (RFC 2104; signs the bridge's media URLs).
    public static func hmacSHA256(key: some Sequence<UInt8>, message: some Sequence<UInt8>) -> [UInt8] {
        hmac(.sha256, key: key, message: message)
    }

    /// PBKDF2 (RFC 8018 §5.2) with HMAC-`hash`, giving one block: as many bytes as `hash` outputs. This is SCRAM's
    /// `Hi(password, salt, iterations)` (RFC 5802 §2.2). Takes time proportional to `iterations`, which must be in
    /// `1...Int32.max`.
    public static func pbkdf2(password: some Sequence<UInt8>, salt: some Sequence<UInt8>, iterations: Int,
                              hash: Algorithm) -> [UInt8] {
        precondition((1...Int(Int32.max)).contains(iterations), "PBKDF2 iteration count out of range")
        let passwordBytes = Array(password), saltBytes = Array(salt)
        var output = [UInt8](repeating: 0, count: hash.length)
        let status = passwordBytes.withUnsafeBytes { passwordBuffer in
            saltBytes.withUnsafeBufferPointer { saltBuffer in
                PKCS5_PBKDF2_HMAC(passwordBuffer.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(passwordBuffer.count),
                                  saltBuffer.baseAddress, Int32(saltBuffer.count), Int32(iterations), hash.evp,
                                  Int32(output.count), &output)
            }
        }
        precondition(status == 1, "PKCS5_PBKDF2_HMAC failed")
        return output
    }

    /// Lowercase hexadecimal form of `bytes`, written into the string's own storage: one allocation (on the message
    /// path for transaction ids; a string grown a `Character` at a time made a dozen, issue 26).
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.withContiguousStorageIfAvailable(hex(contiguous:)) ?? Array(bytes).withUnsafeBufferPointer(hex(contiguous:))
    }

    private static func hex(contiguous bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { output in
            for (index, byte) in bytes.enumerated() {
                output[2 * index] = lowercaseHexDigits[Int(byte >> 4)]
                output[2 * index + 1] = lowercaseHexDigits[Int(byte & 0x0f)]
            }
            return bytes.count * 2
        }
    }

    private static let lowercaseHexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Compares two secrets in time that depends only on their lengths (for bearer tokens).
    public static func constantTimeEqual(_ lhs: some StringProtocol, _ rhs: some StringProtocol) -> Bool {
        constantTimeEqual(Array(lhs.utf8), Array(rhs.utf8))
    }

    /// Compares two secrets in time that depends only on their lengths (bearer tokens, SCRAM's server signature).
    public static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard !lhs.isEmpty else { return true }
        return lhs.withUnsafeBufferPointer { pa in
            rhs.withUnsafeBufferPointer { pb in
                CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, lhs.count) == 0
            }
        }
    }

    /// `count` bytes from OpenSSL's CSPRNG, as lowercase hex (tokens, secrets).
    public static func randomHex(bytes count: Int) -> String {
        var buffer = [UInt8](repeating: 0, count: count)
        precondition(RAND_bytes(&buffer, Int32(count)) == 1, "RAND_bytes failed")
        return hex(buffer)
    }
}
