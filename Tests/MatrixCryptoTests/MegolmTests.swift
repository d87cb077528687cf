@testable import MatrixCrypto
import Testing

/// Megolm against libolm's fixed vectors (tests/test_megolm.cpp, tests/test_group_session.cpp) and its own round trips.
@Suite struct MegolmTests {
    static let seed = Array(String(repeating: "0123456789ABCDEF", count: 8).utf8)

    @Test func ratchetMatchesLibolmAfterAdvancingToFixedIndices() throws {
        let expected1 = String(repeating: "303132333435363738394142434445463031323334353637383941424344454630", count: 1).dropLast(2)
            + String(repeating: "30313233343536373839414243444546", count: 4)
            + "ba9cd955741d1c162323ec825e7c5ce889bbb423a18f23828fb2090d6e2af86a"
        var stepped = try MegolmRatchet(data: Self.seed, index: 0)
        stepped.advance()
        #expect(stepped.index == 1)
        #expect(hex(stepped.data) == String(expected1))

        var ratchet = try MegolmRatchet(data: Self.seed, index: 0)
        ratchet.advance(to: 1)
        #expect(ratchet == stepped)

        ratchet.advance(to: 0x1000000)
        #expect(ratchet.index == 0x1000000)
        #expect(hex(ratchet.data) == "54022d7dc0298e1637e21c97153092f933c056ff74fe1b922d971f2482c2859c"
            + "7004c01ee49bd6efe0073525af9b1632c5be726d12349cc5bd472bdc2df6540f"
            + "3112591194fda617e568c683101eaecd7eddd6de1fbc0767ae34da1a09a54eab"
            + "ba9cd955741d1c162323ec825e7c5ce889bbb423a18f23828fb2090d6e2af86a")

        ratchet.advance(to: 0x1041506)
        #expect(ratchet.index == 0x1041506)
        #expect(hex(ratchet.data) == "54022d7dc0298e1637e21c97153092f933c056ff74fe1b922d971f2482c2859c"
            + "55588df5b7a48878428927868164589f3663447b51edc3595b036ca604c46dcd"
            + "5c54850bfa98a1fd79a9df1cbe8fc5681937d30c85c8c31f7bb828816cf9ff3b"
            + "956cbf807e65126a49558d45c84a2e4cd56f03e24416b98e1cfd97c206aa907a")
    }

    @Test func ratchetWrapsAroundAsLibolm() throws {
        var wrapped = try MegolmRatchet(data: Self.seed, index: 0xFFFF_FFFF)
        wrapped.advance(to: 0x1000000)
        #expect(wrapped.index == 0x1000000)
        var direct = try MegolmRatchet(data: Self.seed, index: 0)
        direct.advance(to: 0x2000000)
        #expect(direct.index == 0x2000000)
        #expect(wrapped.data == direct.data)
    }

    @Test func singleStepsAgreeWithAdvanceTo() throws {
        var stepped = try MegolmRatchet(data: Self.seed, index: 0xF0)
        var jumped = stepped
        for _ in 0..<0x220 { stepped.advance() }
        jumped.advance(to: 0xF0 + 0x220)
        #expect(stepped == jumped)
    }

    @Test func libolmFixedSessionKeyDecryptsItsMessageAndRefusesAChangedSignature() throws {
        let sessionKey = try MegolmSessionKey(base64:
            "AgAAAAAwMTIzNDU2Nzg5QUJERUYwMTIzNDU2Nzg5QUJDREVGMDEyMzQ1Njc4OUFCREVGM"
            + "DEyMzQ1Njc4OUFCQ0RFRjAxMjM0NTY3ODlBQkRFRjAxMjM0NTY3ODlBQkNERUYwMTIzND"
            + "U2Nzg5QUJERUYwMTIzNDU2Nzg5QUJDREVGMDEyMztqJ7zOtqQtYqOo0CpvDXNlMhV3HeJ"
            + "DpjrASKGLWdop4lx1cSN3Xv1TgfLPW8rhGiW+hHiMxd36nRuxscNv9k4oJA/KP+o0mi1w"
            + "v44StrEJ1wwx9WZHBUIWkQbaBSuBDw")
        let text = "AwgAEhAcbh6UpbByoyZxufQ+h2B+8XHMjhR69G8nP4pNZGl/3QMgrzCZPmP+F2aPLyKPz"
            + "xRPBMUkeXRJ6Iqm5NeOdx2eERgTW7P20CM+lL3Xpk+ZUOOPvsSQNaAL"
        let session = MegolmInboundSession(sessionKey: sessionKey)
        let decrypted = try session.decrypt(MegolmMessage(base64: text))
        #expect(decrypted == .init(plaintext: Array("Message".utf8), messageIndex: 0))

        // libolm's test changes the last base64 character (inside the signature) to 'E'.
        let changed = String(text.dropLast()) + "E"
        #expect(throws: MatrixCryptoError.badSignature) { try session.decrypt(MegolmMessage(base64: changed)) }
    }

    @Test func libolmExportImportVectorDecrypts() throws {
        let sessionKey = try MegolmSessionKey(base64:
            "AgAAAAAwMTIzNDU2Nzg5QUJERUYwMTIzNDU2Nzg5QUJDREVGMDEyMzQ1Njc4OUFCREVGM"
            + "DEyMzQ1Njc4OUFCQ0RFRjAxMjM0NTY3ODlBQkRFRjAxMjM0NTY3ODlBQkNERUYwMTIzND"
            + "U2Nzg5QUJERUYwMTIzNDU2Nzg5QUJDREVGMDEyMw0bdg1BDq4Px/slBow06q8n/B9WBfw"
            + "WYyNOB8DlUmXGGwrFmaSb9bR/eY8xgERrxmP07hFmD9uqA2p8PMHdnV5ysmgufE6oLZ5+"
            + "8/mWQOW3VVTnDIlnwd8oHUYRuk8TCQ")
        let message = try MegolmMessage(base64: "AwgAEhAcbh6UpbByoyZxufQ+h2B+8XHMjhR69G8F4+qjMaFlnIXusJZX3r8LnRORG9T3D"
            + "XFdbVuvIWrLyRfm4i8QRbe8VPwGRFG57B1CtmxanuP8bHtnnYqlwPsD")
        let first = MegolmInboundSession(sessionKey: sessionKey)
        #expect(try first.decrypt(message).plaintext == Array("Message".utf8))
        let exported = try #require(first.export(at: 0))
        let second = MegolmInboundSession(exportedKey: try MegolmExportedSessionKey(base64: exported.base64))
        #expect(!second.isSigningKeyVerified)
        #expect(try second.decrypt(message) == .init(plaintext: Array("Message".utf8), messageIndex: 0))
        #expect(second.isSigningKeyVerified)
        #expect(second.sessionID == first.sessionID)
    }

    @Test func sessionKeyWithAForgedSignatureIsRefused() throws {
        var bytes = MegolmOutboundSession().sessionKey.bytes
        bytes[10] ^= 1  // a ratchet byte: the signature no longer matches
        #expect(throws: MatrixCryptoError.badSignature) { try MegolmSessionKey(bytes: bytes) }
        #expect(throws: MatrixCryptoError.self) { try MegolmSessionKey(bytes: Array(bytes.dropLast())) }
    }

    @Test func outboundToInboundInAnyOrderWithIndices() throws {
        let outbound = MegolmOutboundSession()
        let inbound = MegolmInboundSession(sessionKey: try MegolmSessionKey(base64: outbound.sessionKey.base64))
        #expect(inbound.sessionID == outbound.sessionID)
        let messages = (0..<5).map { outbound.encrypt(Array("message \($0)".utf8)) }
        #expect(outbound.messageIndex == 5)
        for index in [3, 0, 4, 1, 2, 3] {
            let decrypted = try inbound.decrypt(messages[index])
            #expect(decrypted == .init(plaintext: Array("message \(index)".utf8), messageIndex: UInt32(index)))
        }
    }

    @Test func sessionSharedLaterRefusesEarlierMessages() throws {
        let outbound = MegolmOutboundSession()
        let early = outbound.encrypt(Array("before".utf8))
        let inbound = MegolmInboundSession(sessionKey: outbound.sessionKey)
        #expect(inbound.firstKnownIndex == 1)
        #expect(throws: MatrixCryptoError.unknownMessageIndex(index: 0, firstKnown: 1)) { try inbound.decrypt(early) }
        #expect(inbound.export(at: 0) == nil)
        #expect(try inbound.decrypt(outbound.encrypt(Array("after".utf8))).plaintext == Array("after".utf8))
    }

    @Test func exportAtALaterIndexDecryptsOnlyFromThere() throws {
        let outbound = MegolmOutboundSession()
        let inbound = MegolmInboundSession(sessionKey: outbound.sessionKey)
        let messages = (0..<4).map { outbound.encrypt(Array("m\($0)".utf8)) }
        _ = try inbound.decrypt(messages[3])
        let exported = try #require(inbound.export(at: 2))
        #expect(exported.firstIndex == 2)
        let imported = MegolmInboundSession(exportedKey: exported)
        #expect(try imported.decrypt(messages[2]).plaintext == Array("m2".utf8))
        #expect(throws: MatrixCryptoError.unknownMessageIndex(index: 1, firstKnown: 2)) { try imported.decrypt(messages[1]) }
    }

    @Test func tamperedCiphertextMACOrSignatureIsRefused() throws {
        let outbound = MegolmOutboundSession()
        let inbound = MegolmInboundSession(sessionKey: outbound.sessionKey)
        let bytes = outbound.encrypt(Array("secret".utf8)).bytes
        let signatureStart = bytes.count - 64, macStart = signatureStart - 8
        for position in [6, macStart, signatureStart + 5] {
            var tampered = bytes
            tampered[position] ^= 0x01
            #expect(throws: MatrixCryptoError.badSignature) { try inbound.decrypt(MegolmMessage(bytes: tampered)) }
        }
        // Re-signed by someone else: the signature check fails before anything else.
        let other = try Ed25519SecretKey(seed: [UInt8](repeating: 9, count: 32))
        var forged = Array(bytes.prefix(signatureStart))
        forged[6] ^= 1
        forged += other.sign(forged).bytes
        #expect(throws: MatrixCryptoError.badSignature) { try inbound.decrypt(MegolmMessage(bytes: forged)) }
        #expect(try inbound.decrypt(MegolmMessage(bytes: bytes)).plaintext == Array("secret".utf8))
    }

    @Test func badMACUnderAValidSignatureIsRefused() throws {
        // A sender that signs a message with a wrong MAC (only the session's key can sign, so this is the sender's
        // own mistake or a check of the MAC path).
        let outbound = MegolmOutboundSession()
        let inbound = MegolmInboundSession(sessionKey: outbound.sessionKey)
        var bytes = Array(outbound.encrypt(Array("x".utf8)).bytes.dropLast(64))
        bytes[bytes.count - 1] ^= 1
        bytes += outbound.signingKey.sign(bytes).bytes
        #expect(throws: MatrixCryptoError.badMAC) { try inbound.decrypt(MegolmMessage(bytes: bytes)) }
    }

    @Test func malformedMessagesAreRefused() throws {
        #expect(throws: MatrixCryptoError.self) { try MegolmMessage(bytes: [3, 8, 0]) }
        var bytes = MegolmOutboundSession().encrypt([1]).bytes
        bytes[0] = 2
        #expect(throws: MatrixCryptoError.unsupportedVersion(kind: "Megolm message", version: 2)) { try MegolmMessage(bytes: bytes) }
    }
}
