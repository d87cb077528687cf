import MatrixCrypto
import Testing

/// Encrypted attachments (spec §11.12.4.5): AES-256-CTR with the SHA-256 of the ciphertext, streamed in pieces.
@Suite struct AttachmentCipherTests {
    static let plaintext = Array("The quick brown fox jumps over the lazy dog, twice over and again.".utf8)
    /// Made with `openssl enc -aes-256-ctr -K 000102…1f -iv a0a1a2a3a4a5a6a70000000000000000` and `sha256sum`.
    static let vector = AttachmentKeys(
        key: Array(0..<32), iv: hex("a0a1a2a3a4a5a6a70000000000000000"),
        sha256: hex("40619c441e9a02c47043d499841864c8387346029790e690f97aa4693d4713af"))
    static let ciphertext = hex("8a141e65ec812f1ce5f844dca8ce63604fa4069a2c9495a1f1921ef5dddbe268963ccec430480b05b310bdb5ac0242c3c5f04e93cdea2fbeacea2848a92ab53982c6")

    @Test func decryptsTheVectorInPiecesOfAnySizeAndChecksItsHash() throws {
        for size in [1, 5, 16, 17, 66] {
            let cipher = try AttachmentCipher.decrypting(Self.vector)
            var plain: [UInt8] = []
            var offset = 0
            while offset < Self.ciphertext.count {
                let end = min(offset + size, Self.ciphertext.count)
                plain += cipher.update(Array(Self.ciphertext[offset..<end]))
                offset = end
            }
            #expect(plain == Self.plaintext, "pieces of \(size)")
            #expect(cipher.verify())
        }
    }

    @Test func aTamperedCiphertextFailsItsHash() throws {
        var tampered = Self.ciphertext
        tampered[40] ^= 1
        let cipher = try AttachmentCipher.decrypting(Self.vector)
        _ = cipher.update(tampered)
        #expect(!cipher.verify())
        let short = try AttachmentCipher.decrypting(Self.vector)
        _ = short.update(Array(Self.ciphertext.dropLast()))
        #expect(!short.verify(), "a truncated file is refused too")
    }

    @Test func encryptingMakesFreshSecretsACounterThatStartsAtZeroAndWhatDecryptingAccepts() throws {
        let first = AttachmentCipher.encrypting()
        let sealed = first.update(Self.plaintext)
        let keys = first.finishEncrypting()
        #expect(keys.isWellFormed)
        #expect(keys.iv.suffix(8) == [UInt8](repeating: 0, count: 8), "the counter half starts at zero (spec: it never wraps)")
        #expect(keys.sha256 == CryptoPrimitives.sha256(sealed), "the hash is of the ciphertext")
        #expect(sealed == (try CryptoPrimitives.aes256CTR(key: keys.key, iv: keys.iv, data: Self.plaintext)))
        let opened = try AttachmentCipher.decrypting(keys)
        #expect(opened.update(sealed) == Self.plaintext)
        #expect(opened.verify())
        let second = AttachmentCipher.encrypting()
        _ = second.update(Self.plaintext)
        #expect(second.finishEncrypting().key != keys.key, "each file its own key")
    }

    @Test func malformedSecretsAreRefused() {
        #expect(throws: MatrixCryptoError.self) {
            try AttachmentCipher.decrypting(AttachmentKeys(key: Array(0..<16), iv: Self.vector.iv, sha256: Self.vector.sha256))
        }
        #expect(throws: MatrixCryptoError.self) {
            try AttachmentCipher.decrypting(AttachmentKeys(key: Self.vector.key, iv: Array(0..<8), sha256: Self.vector.sha256))
        }
        #expect(throws: MatrixCryptoError.self) {
            try AttachmentCipher.decrypting(AttachmentKeys(key: Self.vector.key, iv: Self.vector.iv, sha256: []))
        }
    }
}
