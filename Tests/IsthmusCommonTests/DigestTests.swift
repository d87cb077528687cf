import IsthmusCommon
import Testing

@Suite struct DigestTests {
    @Test func sha1KnownVectors() {
        // FIPS 180-2 appendix A.1 and the empty string.
        #expect(Digest.hex(Digest.sha1(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(Digest.hex(Digest.sha1([UInt8]())) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }

    @Test func sha256KnownVector() {
        #expect(Digest.hex(Digest.sha256(Array("abc".utf8)))
            == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func hexIsLowercaseAndPadded() {
        #expect(Digest.hex([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
        #expect(Digest.hex([UInt8]()) == "")
    }

    @Test func constantTimeEqualComparesWholeStrings() {
        #expect(Digest.constantTimeEqual("secret-token", "secret-token"))
        #expect(!Digest.constantTimeEqual("secret-token", "secret-tokeN"))
        #expect(!Digest.constantTimeEqual("secret-token", "secret-token-longer"))
        #expect(!Digest.constantTimeEqual("secret", ""))
        #expect(Digest.constantTimeEqual("", ""))
        #expect(Digest.constantTimeEqual("é", "é"))
    }

    @Test func randomHexHasTheRequestedLengthAndVaries() {
        let first = Digest.randomHex(bytes: 16)
        #expect(first.count == 32)
        #expect(first.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(first != Digest.randomHex(bytes: 16))
    }
}
