/// The "AES-SHA2" cipher shared by Olm and Megolm (libolm `cipher.c`; Olm spec "Message format", Megolm spec
/// "Message encryption"): HKDF-SHA-256 of a message key (no salt, `info` naming the protocol) gives 80 bytes, an
/// AES-256 key ‖ an HMAC-SHA-256 key ‖ a 16-byte IV; the payload is AES-256-CBC with PKCS#7, and the MAC is
/// HMAC-SHA-256 over the whole serialized message before it, truncated to 8 bytes. Pure value.
struct MessageCipher {
    /// Olm's info string (message keys of the double ratchet).
    static let olmInfo = Array("OLM_KEYS".utf8)
    /// Megolm's info string (the 128-byte ratchet state).
    static let megolmInfo = Array("MEGOLM_KEYS".utf8)
    /// Length of the truncated MAC both protocols append (libolm's `MAC_LENGTH`; vodozemac's `Mac::TRUNCATED_LEN`).
    static let macLength = 8

    private let aesKey: [UInt8]
    private let macKey: [UInt8]
    private let iv: [UInt8]

    /// The keys derived from `messageKey` (32 bytes for Olm, the 128-byte ratchet for Megolm) with `info`.
    init(messageKey: [UInt8], info: [UInt8]) {
        let derived = CryptoPrimitives.hkdfSHA256(inputKey: messageKey, salt: [], info: info, length: 80)
        aesKey = Array(derived[0..<32])
        macKey = Array(derived[32..<64])
        iv = Array(derived[64..<80])
    }

    /// `plaintext` under AES-256-CBC.
    func encrypt(_ plaintext: [UInt8]) -> [UInt8] {
        // Cannot fail: the key and IV lengths are fixed above.
        try! CryptoPrimitives.aes256CBCEncrypt(key: aesKey, iv: iv, plaintext: plaintext)
    }

    /// The truncated MAC of `message` (everything of the serialized message before the MAC).
    func mac(_ message: [UInt8]) -> [UInt8] {
        Array(CryptoPrimitives.hmacSHA256(key: macKey, message: message).prefix(Self.macLength))
    }

    /// Checks the MAC of `message` in constant time (`badMAC` when it differs), then decrypts `ciphertext`.
    func verifyAndDecrypt(message: [UInt8], mac: [UInt8], ciphertext: [UInt8]) throws -> [UInt8] {
        guard CryptoPrimitives.constantTimeEqual(self.mac(message), mac) else { throw MatrixCryptoError.badMAC }
        return try CryptoPrimitives.aes256CBCDecrypt(key: aesKey, iv: iv, ciphertext: ciphertext)
    }
}
