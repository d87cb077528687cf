private import COpenSSL

/// AES-256-CTR and SHA-256 over data that comes in pieces (a file streamed from a homeserver, or to it), for
/// ``AttachmentCipher``. The second file of `MatrixCrypto` that sees OpenSSL, beside ``CryptoPrimitives``: one
/// OpenSSL context of each kind per stream, freed with it. Not thread-safe: one stream is used by one thread at a time.
final class CTRStream: @unchecked Sendable {
    private let cipher: OpaquePointer
    private let digest: OpaquePointer
    /// Whether the digest covers what comes out (encrypting: the ciphertext) rather than what goes in.
    private let hashesOutput: Bool

    /// A stream under `key` (32 bytes) from the counter block `iv` (16 bytes). The digest covers the ciphertext side.
    init(key: [UInt8], iv: [UInt8], encrypting: Bool) throws {
        guard key.count == 32 else { throw MatrixCryptoError.invalidLength(kind: "AES-256 key", expected: 32, actual: key.count) }
        guard iv.count == 16 else { throw MatrixCryptoError.invalidLength(kind: "AES-CTR counter block", expected: 16, actual: iv.count) }
        guard let cipher = EVP_CIPHER_CTX_new() else { throw MatrixCryptoError.openSSL(operation: "EVP_CIPHER_CTX_new", detail: "") }
        guard let digest = EVP_MD_CTX_new() else {
            EVP_CIPHER_CTX_free(cipher)
            throw MatrixCryptoError.openSSL(operation: "EVP_MD_CTX_new", detail: "")
        }
        self.cipher = cipher
        self.digest = digest
        hashesOutput = encrypting
        guard EVP_CipherInit_ex(cipher, EVP_aes_256_ctr(), nil, key, iv, 1) == 1,
              EVP_DigestInit_ex(digest, EVP_sha256(), nil) == 1
        else { throw MatrixCryptoError.openSSL(operation: "AES-256-CTR stream", detail: "") }
    }

    deinit {
        EVP_CIPHER_CTX_free(cipher)
        EVP_MD_CTX_free(digest)
    }

    /// The next piece, transformed (CTR: the same length), the digest moved on.
    func update(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        guard let base = input.baseAddress, input.count > 0 else { return [] }
        var output = [UInt8](repeating: 0, count: input.count)
        var written: Int32 = 0
        var offset = 0
        // EVP_CipherUpdate takes an Int32 length: pieces above 1 GiB go in parts.
        while offset < input.count {
            let count = min(input.count - offset, 1 << 30)
            let ok = output.withUnsafeMutableBufferPointer { out in
                EVP_CipherUpdate(cipher, out.baseAddress! + offset, &written, base.assumingMemoryBound(to: UInt8.self) + offset, Int32(count))
            }
            precondition(ok == 1 && Int(written) == count, "AES-256-CTR update failed")
            offset += count
        }
        if hashesOutput {
            output.withUnsafeBytes { _ = EVP_DigestUpdate(digest, $0.baseAddress, $0.count) }
        } else {
            _ = EVP_DigestUpdate(digest, base, input.count)
        }
        return output
    }

    /// The SHA-256 of the ciphertext side of everything so far. Call once, at the end.
    func finish() -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        precondition(EVP_DigestFinal_ex(digest, &output, &length) == 1 && length == 32, "SHA-256 final failed")
        return output
    }
}
