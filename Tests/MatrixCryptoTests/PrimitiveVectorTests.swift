import MatrixCrypto
import Testing

/// The primitives against published vectors (the RFCs, and libolm's tests/test_crypto.cpp).
@Suite struct PrimitiveVectorTests {
    @Test func x25519MatchesRFC7748Section6_1() throws {
        let alice = try Curve25519SecretKey(bytes: hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
        let bob = try Curve25519SecretKey(bytes: hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"))
        #expect(hex(alice.publicKey.bytes) == "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        #expect(hex(bob.publicKey.bytes) == "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
        let shared = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"
        #expect(hex(try alice.diffieHellman(with: bob.publicKey)) == shared)
        #expect(hex(try bob.diffieHellman(with: alice.publicKey)) == shared)
    }

    @Test func x25519RefusesALowOrderPoint() throws {
        let ours = Curve25519SecretKey()
        let zero = try Curve25519PublicKey(bytes: [UInt8](repeating: 0, count: 32))
        #expect(throws: MatrixCryptoError.self) { try ours.diffieHellman(with: zero) }
    }

    @Test func ed25519MatchesRFC8032Test1() throws {
        let key = try Ed25519SecretKey(seed: hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))
        #expect(hex(key.publicKey.bytes) == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        let signature = key.sign([])
        #expect(hex(signature.bytes) == "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
            + "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
        #expect(key.publicKey.isValidSignature(signature, of: []))
        #expect(!key.publicKey.isValidSignature(signature, of: [0]))
    }

    @Test func ed25519SignsAndRefusesAChangedMessageAsLibolmTests() throws {
        let key = try Ed25519SecretKey(seed: Array("This key is a string of 32 bytes".utf8))
        var message = Array("Hello, World".utf8)
        let signature = key.sign(message)
        #expect(key.publicKey.isValidSignature(signature, of: message))
        message[0] = UInt8(ascii: "n")
        #expect(!key.publicKey.isValidSignature(signature, of: message))
        #expect(throws: MatrixCryptoError.badSignature) { try key.publicKey.verify(signature, of: message) }
    }

    @Test func aes256CBCMatchesLibolmTestCase1() throws {
        let key = [UInt8](repeating: 0, count: 32), iv = [UInt8](repeating: 0, count: 16)
        let ciphertext = try CryptoPrimitives.aes256CBCEncrypt(key: key, iv: iv, plaintext: [UInt8](repeating: 0, count: 16))
        #expect(hex(ciphertext) == "dc95c078a2408989ad48a21492842087f3c003ddc4a7b8a94baedffc3d214c38")
        #expect(try CryptoPrimitives.aes256CBCDecrypt(key: key, iv: iv, ciphertext: ciphertext) == [UInt8](repeating: 0, count: 16))
    }

    @Test func aes256CBCRefusesBadPadding() throws {
        let key = [UInt8](repeating: 7, count: 32), iv = [UInt8](repeating: 1, count: 16)
        var ciphertext = try CryptoPrimitives.aes256CBCEncrypt(key: key, iv: iv, plaintext: Array("hello".utf8))
        ciphertext[15] ^= 0xff
        #expect(throws: MatrixCryptoError.badPadding) { try CryptoPrimitives.aes256CBCDecrypt(key: key, iv: iv, ciphertext: ciphertext) }
        #expect(throws: MatrixCryptoError.badPadding) { try CryptoPrimitives.aes256CBCDecrypt(key: key, iv: iv, ciphertext: [1, 2]) }
    }

    @Test func aes256CTRMatchesNISTSP800_38AF5_5() throws {
        // NIST SP 800-38A F.5.5 (CTR-AES256.Encrypt), first two blocks.
        let key = hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")
        let counter = hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
        let plaintext = hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51")
        let ciphertext = try CryptoPrimitives.aes256CTR(key: key, iv: counter, data: plaintext)
        #expect(hex(ciphertext) == "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5")
        #expect(try CryptoPrimitives.aes256CTR(key: key, iv: counter, data: ciphertext) == plaintext)
    }

    @Test func sha256AndHMACOfEmptyInputMatchLibolm() {
        #expect(hex(CryptoPrimitives.sha256([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(CryptoPrimitives.hmacSHA256(key: [], message: []))
            == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test func hkdfMatchesRFC5869Case1() {
        let ikm = [UInt8](repeating: 0x0b, count: 22), salt = hex("000102030405060708090a0b0c"), info = hex("f0f1f2f3f4f5f6f7f8f9")
        #expect(hex(CryptoPrimitives.hmacSHA256(key: salt, message: ikm))
            == "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5")  // the PRK
        #expect(hex(CryptoPrimitives.hkdfSHA256(inputKey: ikm, salt: salt, info: info, length: 42))
            == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }

    @Test func hkdfWithoutSaltUsesZeroSalt() {
        let ikm = Array("input".utf8)
        #expect(CryptoPrimitives.hkdfSHA256(inputKey: ikm, salt: [], info: Array("OLM_ROOT".utf8), length: 64)
            == CryptoPrimitives.hkdfSHA256(inputKey: ikm, salt: [UInt8](repeating: 0, count: 32), info: Array("OLM_ROOT".utf8), length: 64))
    }

    @Test func aesGCMSealsAndRefusesWrongKeyDataOrTamper() throws {
        let key = CryptoPrimitives.randomBytes(32), nonce = CryptoPrimitives.randomBytes(12)
        let sealed = try CryptoPrimitives.aes256GCMSeal(key: key, nonce: nonce, plaintext: Array("secret".utf8), associatedData: [1])
        #expect(sealed.count == 6 + 16)
        #expect(try CryptoPrimitives.aes256GCMOpen(key: key, nonce: nonce, sealed: sealed, associatedData: [1]) == Array("secret".utf8))
        #expect(try CryptoPrimitives.aes256GCMOpen(key: CryptoPrimitives.randomBytes(32), nonce: nonce, sealed: sealed, associatedData: [1]) == nil)
        #expect(try CryptoPrimitives.aes256GCMOpen(key: key, nonce: nonce, sealed: sealed, associatedData: [2]) == nil)
        var tampered = sealed
        tampered[0] ^= 1
        #expect(try CryptoPrimitives.aes256GCMOpen(key: key, nonce: nonce, sealed: tampered, associatedData: [1]) == nil)
        let empty = try CryptoPrimitives.aes256GCMSeal(key: key, nonce: nonce, plaintext: [], associatedData: [])
        #expect(try CryptoPrimitives.aes256GCMOpen(key: key, nonce: nonce, sealed: empty, associatedData: []) == [])
    }

    @Test func randomBytesVary() {
        #expect(CryptoPrimitives.randomBytes(32).count == 32)
        #expect(CryptoPrimitives.randomBytes(32) != CryptoPrimitives.randomBytes(32))
    }
}

/// RFC 5869 test case 3 (empty salt and info), and an empty input key, which the RFC allows.
@Suite struct HKDFEdgeTests {
    @Test func rfc5869Case3() {
        let ikm = [UInt8](repeating: 0x0b, count: 22)
        #expect(hex(CryptoPrimitives.hkdfSHA256(inputKey: ikm, salt: [], info: [], length: 42))
            == "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
    }

    @Test func emptyInputKeyIsAllowed() {
        // Extract gives HMAC(zeros, ""); expand then runs as usual.
        let prk = CryptoPrimitives.hmacSHA256(key: [UInt8](repeating: 0, count: 32), message: [])
        let expected = CryptoPrimitives.hmacSHA256(key: prk, message: Array("info".utf8) + [1])
        #expect(CryptoPrimitives.hkdfSHA256(inputKey: [], salt: [], info: Array("info".utf8), length: 32) == expected)
    }
}
