private import COpenSSL

/// The primitives of Olm, Megolm, encrypted attachments and sealed pickles, on OpenSSL 3's libcrypto. The only file
/// of `MatrixCrypto` that sees OpenSSL: everything here takes and returns byte arrays (``CTRStream`` too). Pure
/// functions, no I/O; safe from any thread (OpenSSL 3 contexts are created per call).
///
/// OpenSSL's X25519, Ed25519, AES (AES-NI or its constant-time bit-sliced code) and `CRYPTO_memcmp` are constant-time,
/// which is why Isthmus uses them rather than a port of libolm's primitives (CVE-2024-45191, CVE-2024-45193).
/// Operations that cannot fail on well-formed input (hashing, HMAC, HKDF, encryption under a key of the right length)
/// stop the process if OpenSSL fails, as `Digest` does; those that depend on input from a peer throw.
public enum CryptoPrimitives {
    /// `count` bytes from OpenSSL's CSPRNG (`RAND_bytes`).
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return buffer }
        precondition(RAND_bytes(&buffer, Int32(count)) == 1, "RAND_bytes failed")
        return buffer
    }

    /// SHA-256 of `bytes` (FIPS 180-4).
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBufferPointer { _ = SHA256($0.baseAddress, $0.count, &output) }
        return output
    }

    /// HMAC-SHA-256 of `message` under `key` (RFC 2104).
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        // OpenSSL 3 takes a null key pointer as "no key" and fails, so an empty key is a one-byte buffer of length 0.
        let keyBytes = key.isEmpty ? [0] : key, messageBytes = message.isEmpty ? [0] : message
        let result = keyBytes.withUnsafeBufferPointer { keyBuffer in
            messageBytes.withUnsafeBufferPointer { messageBuffer in
                HMAC(EVP_sha256(), keyBuffer.baseAddress, Int32(key.count), messageBuffer.baseAddress,
                     message.count, &output, &length)
            }
        }
        precondition(result != nil && length == 32, "HMAC-SHA-256 failed")
        return output
    }

    /// HKDF-SHA-256 (RFC 5869), extract then expand, giving `length` bytes. An empty `salt` means HashLen zero bytes,
    /// as the RFC (and libolm, which passes no salt) specify.
    public static func hkdfSHA256(inputKey: [UInt8], salt: [UInt8], info: [UInt8], length: Int) -> [UInt8] {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nil) else { preconditionFailure("HKDF context") }
        defer { EVP_PKEY_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: length)
        var outputLength = length
        // OpenSSL refuses a zero-length key buffer, so an empty input key is passed as a one-byte buffer of length 0.
        let key = inputKey.isEmpty ? [0] : inputKey, saltBytes = salt.isEmpty ? [UInt8](repeating: 0, count: 32) : salt
        let ok = EVP_PKEY_derive_init(context) == 1
            && EVP_PKEY_CTX_set_hkdf_md(context, EVP_sha256()) == 1
            && EVP_PKEY_CTX_set1_hkdf_salt(context, saltBytes, Int32(saltBytes.count)) == 1
            && EVP_PKEY_CTX_set1_hkdf_key(context, key, Int32(inputKey.count)) == 1
            && (info.isEmpty || EVP_PKEY_CTX_add1_hkdf_info(context, info, Int32(info.count)) == 1)
            && EVP_PKEY_derive(context, &output, &outputLength) == 1
        precondition(ok && outputLength == length, "HKDF-SHA-256 failed: \(lastError())")
        return output
    }

    /// Compares two byte strings in time that depends only on their lengths (`CRYPTO_memcmp`).
    public static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard !lhs.isEmpty else { return true }
        return lhs.withUnsafeBufferPointer { a in rhs.withUnsafeBufferPointer { b in
            CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0
        } }
    }

    // MARK: AES

    /// AES-256-CBC with PKCS#7 padding (Olm and Megolm payloads). `key` is 32 bytes, `iv` 16.
    public static func aes256CBCEncrypt(key: [UInt8], iv: [UInt8], plaintext: [UInt8]) throws -> [UInt8] {
        try checkLength("AES-256 key", key, 32)
        try checkLength("AES-CBC IV", iv, 16)
        return try cipher(EVP_aes_256_cbc(), encrypt: true, key: key, iv: iv, input: plaintext, operation: "AES-256-CBC")
    }

    /// Reverses `aes256CBCEncrypt`; throws `badPadding` when the padding is wrong (after a MAC check, never before).
    public static func aes256CBCDecrypt(key: [UInt8], iv: [UInt8], ciphertext: [UInt8]) throws -> [UInt8] {
        try checkLength("AES-256 key", key, 32)
        try checkLength("AES-CBC IV", iv, 16)
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0 else { throw MatrixCryptoError.badPadding }
        do {
            return try cipher(EVP_aes_256_cbc(), encrypt: false, key: key, iv: iv, input: ciphertext, operation: "AES-256-CBC")
        } catch {
            throw MatrixCryptoError.badPadding
        }
    }

    /// AES-256-CTR, which encrypts and decrypts alike (Matrix encrypted attachments, `A256CTR`). `iv` is the 16-byte
    /// initial counter block.
    public static func aes256CTR(key: [UInt8], iv: [UInt8], data: [UInt8]) throws -> [UInt8] {
        try checkLength("AES-256 key", key, 32)
        try checkLength("AES-CTR counter block", iv, 16)
        return try cipher(EVP_aes_256_ctr(), encrypt: true, key: key, iv: iv, input: data, operation: "AES-256-CTR")
    }

    /// AES-256-GCM: `plaintext` sealed under `key` with a 12-byte `nonce`, authenticating `associatedData` too.
    /// Returns the ciphertext followed by the 16-byte tag.
    public static func aes256GCMSeal(key: [UInt8], nonce: [UInt8], plaintext: [UInt8],
                                     associatedData: [UInt8]) throws -> [UInt8] {
        try checkLength("AES-256 key", key, 32)
        try checkLength("AES-GCM nonce", nonce, 12)
        guard let context = EVP_CIPHER_CTX_new() else { throw openSSLError("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: plaintext.count + 16)
        var written: Int32 = 0, final: Int32 = 0, associatedWritten: Int32 = 0
        var tag = [UInt8](repeating: 0, count: 16)
        let ok = EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1
            && (associatedData.isEmpty
                || EVP_EncryptUpdate(context, nil, &associatedWritten, associatedData, Int32(associatedData.count)) == 1)
            && (plaintext.isEmpty || EVP_EncryptUpdate(context, &output, &written, plaintext, Int32(plaintext.count)) == 1)
            && output.withUnsafeMutableBufferPointer { EVP_EncryptFinal_ex(context, $0.baseAddress! + Int(written), &final) } == 1
            && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, 16, &tag) == 1
        guard ok else { throw openSSLError("AES-256-GCM seal") }
        return Array(output.prefix(Int(written + final))) + tag
    }

    /// Opens what `aes256GCMSeal` made (ciphertext followed by the tag). Returns nil when the tag does not verify:
    /// the wrong key, the wrong associated data or altered bytes.
    public static func aes256GCMOpen(key: [UInt8], nonce: [UInt8], sealed: [UInt8], associatedData: [UInt8]) throws -> [UInt8]? {
        try checkLength("AES-256 key", key, 32)
        try checkLength("AES-GCM nonce", nonce, 12)
        guard sealed.count >= 16 else { return nil }
        let ciphertext = Array(sealed.dropLast(16))
        var tag = Array(sealed.suffix(16))
        guard let context = EVP_CIPHER_CTX_new() else { throw openSSLError("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var written: Int32 = 0, final: Int32 = 0, associatedWritten: Int32 = 0
        guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1,
              associatedData.isEmpty
                || EVP_DecryptUpdate(context, nil, &associatedWritten, associatedData, Int32(associatedData.count)) == 1
        else { throw openSSLError("AES-256-GCM open") }
        guard ciphertext.isEmpty || EVP_DecryptUpdate(context, &output, &written, ciphertext, Int32(ciphertext.count)) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, 16, &tag) == 1
        else { throw openSSLError("AES-256-GCM open") }
        let verified = output.withUnsafeMutableBufferPointer { EVP_DecryptFinal_ex(context, $0.baseAddress! + Int(written), &final) }
        guard verified == 1 else {
            ERR_clear_error()
            return nil
        }
        return Array(output.prefix(Int(written + final)))
    }

    // MARK: Curve25519 and Ed25519

    /// The X25519 public key of a 32-byte private key (RFC 7748 §6.1; the private key is clamped by X25519 itself).
    public static func x25519PublicKey(privateKey: [UInt8]) throws -> [UInt8] {
        try checkLength("Curve25519 private key", privateKey, 32)
        let key = try rawPrivateKey(EVP_PKEY_X25519, privateKey, "X25519 private key")
        defer { EVP_PKEY_free(key) }
        return try rawPublicKey(key, "X25519 public key")
    }

    /// X25519 Diffie-Hellman of our `privateKey` and their `publicKey` (RFC 7748 §6.1). Throws when the result is all
    /// zeros (a low-order public key), which OpenSSL refuses.
    public static func x25519(privateKey: [UInt8], publicKey: [UInt8]) throws -> [UInt8] {
        try checkLength("Curve25519 private key", privateKey, 32)
        try checkLength("Curve25519 public key", publicKey, 32)
        let ours = try rawPrivateKey(EVP_PKEY_X25519, privateKey, "X25519 private key")
        defer { EVP_PKEY_free(ours) }
        guard let theirs = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nil, publicKey, 32) else {
            throw openSSLError("X25519 public key")
        }
        defer { EVP_PKEY_free(theirs) }
        guard let context = EVP_PKEY_CTX_new(ours, nil) else { throw openSSLError("EVP_PKEY_CTX_new") }
        defer { EVP_PKEY_CTX_free(context) }
        var secret = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, theirs) == 1,
              EVP_PKEY_derive(context, &secret, &length) == 1, length == 32
        else { throw openSSLError("X25519") }
        return secret
    }

    /// The Ed25519 public key of a 32-byte seed (RFC 8032 §5.1.5).
    public static func ed25519PublicKey(seed: [UInt8]) throws -> [UInt8] {
        try checkLength("Ed25519 seed", seed, 32)
        let key = try rawPrivateKey(EVP_PKEY_ED25519, seed, "Ed25519 private key")
        defer { EVP_PKEY_free(key) }
        return try rawPublicKey(key, "Ed25519 public key")
    }

    /// The 64-byte Ed25519 signature of `message` by the key of `seed` (RFC 8032 §5.1.6; deterministic).
    public static func ed25519Sign(seed: [UInt8], message: [UInt8]) throws -> [UInt8] {
        try checkLength("Ed25519 seed", seed, 32)
        let key = try rawPrivateKey(EVP_PKEY_ED25519, seed, "Ed25519 private key")
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { throw openSSLError("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        var signature = [UInt8](repeating: 0, count: 64)
        var length = 64
        guard EVP_DigestSignInit(context, nil, nil, nil, key) == 1,
              EVP_DigestSign(context, &signature, &length, message, message.count) == 1, length == 64
        else { throw openSSLError("Ed25519 sign") }
        return signature
    }

    /// Whether `signature` is a valid Ed25519 signature of `message` by `publicKey` (RFC 8032 §5.1.7; OpenSSL refuses
    /// non-canonical S, so signatures are not malleable). False for a public key that is not a curve point.
    public static func ed25519Verify(publicKey: [UInt8], message: [UInt8], signature: [UInt8]) -> Bool {
        guard publicKey.count == 32, signature.count == 64,
              let key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, publicKey, 32) else { return false }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else { return false }
        let result = EVP_DigestVerify(context, signature, 64, message, message.count)
        ERR_clear_error()
        return result == 1
    }

    // MARK: Helpers

    private static func cipher(_ kind: OpaquePointer?, encrypt: Bool, key: [UInt8], iv: [UInt8], input: [UInt8],
                               operation: String) throws -> [UInt8] {
        guard let context = EVP_CIPHER_CTX_new() else { throw openSSLError("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: input.count + 32)
        var written: Int32 = 0, final: Int32 = 0
        guard EVP_CipherInit_ex(context, kind, nil, key, iv, encrypt ? 1 : 0) == 1,
              input.isEmpty || EVP_CipherUpdate(context, &output, &written, input, Int32(input.count)) == 1
        else { throw openSSLError(operation) }
        let finished = output.withUnsafeMutableBufferPointer { EVP_CipherFinal_ex(context, $0.baseAddress! + Int(written), &final) }
        guard finished == 1 else { throw openSSLError(operation) }
        return Array(output.prefix(Int(written + final)))
    }

    private static func rawPrivateKey(_ type: Int32, _ bytes: [UInt8], _ what: String) throws -> OpaquePointer {
        guard let key = EVP_PKEY_new_raw_private_key(type, nil, bytes, bytes.count) else { throw openSSLError(what) }
        return key
    }

    private static func rawPublicKey(_ key: OpaquePointer, _ what: String) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard EVP_PKEY_get_raw_public_key(key, &output, &length) == 1, length == 32 else { throw openSSLError(what) }
        return output
    }

    private static func checkLength(_ kind: String, _ bytes: [UInt8], _ expected: Int) throws {
        guard bytes.count == expected else {
            throw MatrixCryptoError.invalidLength(kind: kind, expected: expected, actual: bytes.count)
        }
    }

    private static func openSSLError(_ operation: String) -> MatrixCryptoError {
        .openSSL(operation: operation, detail: lastError())
    }

    /// OpenSSL's oldest queued error as text, emptying the queue (so a later call never reports a stale error).
    private static func lastError() -> String {
        let code = ERR_get_error()
        defer { ERR_clear_error() }
        guard code != 0 else { return "" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// AES-256-CTR and SHA-256 over data that comes in pieces (a file on its way to or from a homeserver), for
/// ``AttachmentCipher``: one OpenSSL context of each kind per stream, freed with it. Not thread-safe: one stream is
/// used by one thread at a time.
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
