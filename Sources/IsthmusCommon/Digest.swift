private import COpenSSL

/// Hashes and secrets on OpenSSL's libcrypto. Pure functions; no I/O.
public enum Digest {
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

    /// HMAC-SHA-256 of `message` under `key` (RFC 2104; signs the bridge's media URLs).
    public static func hmacSHA256(key: some Sequence<UInt8>, message: some Sequence<UInt8>) -> [UInt8] {
        let keyBytes = Array(key), input = Array(message)
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        keyBytes.withUnsafeBufferPointer { keyBuffer in
            input.withUnsafeBufferPointer { source in
                _ = COpenSSL.HMAC(EVP_sha256(), keyBuffer.baseAddress, Int32(keyBuffer.count), source.baseAddress, source.count,
                                  &output, &length)
            }
        }
        return Array(output.prefix(Int(length)))
    }

    /// Lowercase hexadecimal form of `bytes`.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits: [Character] = Array("0123456789abcdef")
        var result = ""
        for byte in bytes {
            result.append(digits[Int(byte >> 4)])
            result.append(digits[Int(byte & 0x0f)])
        }
        return result
    }

    /// Compares two secrets in time that depends only on their lengths (for bearer tokens).
    public static func constantTimeEqual(_ lhs: some StringProtocol, _ rhs: some StringProtocol) -> Bool {
        let a = Array(lhs.utf8), b = Array(rhs.utf8)
        guard a.count == b.count else { return false }
        return a.withUnsafeBufferPointer { pa in
            b.withUnsafeBufferPointer { pb in
                CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0
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
