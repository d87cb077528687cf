import Foundation
import IsthmusCommon
import Testing
import XMPP

/// SCRAM (RFC 5802, RFC 7677) and XEP-0474 with the specifications' literal messages.
@Suite struct SCRAMTests {
    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
    func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    // RFC 5802 §5.
    static let sha1Nonce = "fyko+d2lbbFgONRv9qkxdawL"
    static let sha1ServerFirst = "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096"
    static let sha1ClientFinal = "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts="
    static let sha1ServerFinal = "v=rmF9pqV8S7suAoZWja4dJRkFsKQ="

    func sha1Client(_ credential: SCRAMClient.Credential = .password("pencil")) throws -> SCRAMClient {
        try SCRAMClient(hash: .sha1, username: "user", credential: credential, nonce: Self.sha1Nonce)
    }

    @Test func rfc5802SHA1ExchangeByteForByte() throws {
        var client = try sha1Client()
        #expect(client.mechanismName == "SCRAM-SHA-1")
        #expect(text(client.clientFirst()) == "n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL")
        #expect(text(try client.receive(serverFirst: bytes(Self.sha1ServerFirst))) == Self.sha1ClientFinal)
        #expect(!client.isAuthenticated)
        #expect(client.saltedPassword == nil)
        try client.receive(serverFinal: bytes(Self.sha1ServerFinal))
        #expect(client.isAuthenticated)
        let salted = try #require(client.saltedPassword)
        #expect(salted.hash == .sha1)
        #expect(base64(salted.salt) == "QSXCR+Q6sek8bf92")
        #expect(salted.iterations == 4096)
        #expect(salted.bytes.count == 20)
    }

    @Test func rfc7677SHA256ExchangeByteForByte() throws {
        var client = try SCRAMClient(hash: .sha256, username: "user", credential: .password("pencil"),
                                     nonce: "rOprNGfwEbeRWgbNEkqO")
        #expect(client.mechanismName == "SCRAM-SHA-256")
        #expect(text(client.clientFirst()) == "n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
        let clientFinal = try client.receive(serverFirst: bytes(
            "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"))
        #expect(text(clientFinal) == """
            c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
            p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=
            """)
        try client.receive(serverFinal: bytes("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="))
        #expect(client.isAuthenticated)
        #expect(client.saltedPassword?.bytes.count == 32)
    }

    @Test func wrongServerSignatureIsRefusedAndEndsTheExchange() throws {
        var client = try sha1Client()
        _ = try client.receive(serverFirst: bytes(Self.sha1ServerFirst))
        #expect(throws: SCRAMError.serverSignatureMismatch) {
            try client.receive(serverFinal: bytes("v=rmF8pqV8S7suAoZWja4dJRkFsKQ="))
        }
        #expect(!client.isAuthenticated)
        #expect(client.saltedPassword == nil)
        #expect(throws: SCRAMError.unexpectedMessage) { try client.receive(serverFinal: bytes(Self.sha1ServerFinal)) }
    }

    @Test func serverNonceMustExtendOurs() throws {
        for nonce in ["3rfcNHYJY1ZVvWVs7jfyko+d2lbbFgONRv9qkxdawL", "fyko+d2lbbFgONRv9qkxdawL", "fyko+d2lbb"] {
            var client = try sha1Client()
            #expect(throws: SCRAMError.nonceMismatch) {
                try client.receive(serverFirst: bytes("r=\(nonce),s=QSXCR+Q6sek8bf92,i=4096"))
            }
        }
    }

    @Test func serverErrorIsMapped() throws {
        var client = try sha1Client()
        _ = try client.receive(serverFirst: bytes(Self.sha1ServerFirst))
        #expect(throws: SCRAMError.serverError(.invalidProof)) { try client.receive(serverFinal: bytes("e=invalid-proof")) }
        #expect(SCRAMError.serverError(.invalidProof).description == "the server refused the authentication: invalid-proof")

        var other = try sha1Client()
        _ = try other.receive(serverFirst: bytes(Self.sha1ServerFirst))
        #expect(throws: SCRAMError.serverError(.unrecognized("too-tired"))) {
            try other.receive(serverFinal: bytes("e=too-tired"))
        }
    }

    @Test func cachedSaltedPasswordGivesTheSameProof() throws {
        var first = try sha1Client()
        _ = try first.receive(serverFirst: bytes(Self.sha1ServerFirst))
        try first.receive(serverFinal: bytes(Self.sha1ServerFinal))
        let salted = try #require(first.saltedPassword)

        var cached = try sha1Client(.salted(salted))
        #expect(text(try cached.receive(serverFirst: bytes(Self.sha1ServerFirst))) == Self.sha1ClientFinal)
        try cached.receive(serverFinal: bytes(Self.sha1ServerFinal))
        #expect(cached.saltedPassword == salted)

        var stale = try sha1Client(.salted(salted))
        #expect(throws: SCRAMError.cachedCredentialMismatch) {
            try stale.receive(serverFirst: bytes(Self.sha1ServerFirst.replacingOccurrences(of: "i=4096", with: "i=8192")))
        }
    }

    @Test func usernameIsEscapedAndNULRefused() throws {
        let client = try SCRAMClient(hash: .sha1, username: "a=b,c", credential: .password("p"), nonce: "abc")
        #expect(text(client.clientFirst()) == "n,,n=a=3Db=2Cc,r=abc")
        #expect(throws: SCRAMError.invalidUsername) {
            try SCRAMClient(hash: .sha1, username: "a\u{0}b", credential: .password("p"), nonce: "abc")
        }
        #expect(throws: SCRAMError.invalidUsername) {
            try SCRAMClient(hash: .sha1, username: "", credential: .password("p"), nonce: "abc")
        }
        #expect(throws: SCRAMError.invalidClientNonce) {
            try SCRAMClient(hash: .sha1, username: "user", credential: .password("p"), nonce: "a,b")
        }
    }

    @Test func gs2HeaderAndChannelBindingAttributeForEachBinding() throws {
        #expect(ChannelBinding.notSupported.gs2Header == "n,,")
        #expect(ChannelBinding.notSupported.channelBindingAttribute == "biws")
        #expect(ChannelBinding.notOfferedByServer.gs2Header == "y,,")
        #expect(ChannelBinding.notOfferedByServer.channelBindingAttribute == "eSws")
        let data: [UInt8] = [0x00, 0xFF, 0x10, 0x80]
        let exporter = ChannelBinding.bound(type: .tlsExporter, data: data)
        #expect(exporter.gs2Header == "p=tls-exporter,,")
        #expect(exporter.channelBindingAttribute == base64(bytes("p=tls-exporter,,") + data))
        let endPoint = ChannelBinding.bound(type: .tlsServerEndPoint, data: data)
        #expect(endPoint.gs2Header == "p=tls-server-end-point,,")
        #expect(endPoint.channelBindingAttribute == base64(bytes("p=tls-server-end-point,,") + data))

        let bound = try SCRAMClient(hash: .sha256, username: "user", credential: .password("p"), binding: exporter,
                                    nonce: "abc")
        #expect(bound.mechanismName == "SCRAM-SHA-256-PLUS")
        #expect(text(bound.clientFirst()) == "p=tls-exporter,,n=user,r=abc")
        let flagged = try SCRAMClient(hash: .sha1, username: "user", credential: .password("p"),
                                      binding: .notOfferedByServer, nonce: "abc")
        #expect(flagged.mechanismName == "SCRAM-SHA-1")
        #expect(text(flagged.clientFirst()) == "y,,n=user,r=abc")
    }

    // XEP-0474 §"Full Example" (SCRAM-SHA-1-PLUS, tls-exporter, fake binding data).
    static let xepNonce = "12C4CD5C-E38E-4A98-8F6D-15C38F51CCC6"
    static let xepServerNonce = xepNonce + "a09117a6-ac50-4f2f-93f1-93799c2bddf6"
    static let xepServerFirst = "r=\(xepServerNonce),s=QSXCR+Q6sek8bf92,i=4096,h=G6k/rBLDqgOhRRaCuuatSDFkJ08="
    static let xepBinding = ChannelBinding.bound(type: .tlsExporter, data: Array("THIS IS FAKE CB DATA".utf8))

    func xepClient(_ offer: SASLOffer?) throws -> SCRAMClient {
        try SCRAMClient(hash: .sha1, username: "user", credential: .password("pencil"), binding: Self.xepBinding,
                        nonce: Self.xepNonce, offer: offer)
    }

    @Test func downgradeProtectionHashMatchesTheXEPExample() throws {
        let offer = SASLOffer(mechanisms: ["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"],
                              channelBindingTypes: ["tls-server-end-point", "tls-exporter"])
        #expect(text(offer.downgradeProtectionInput) == "SCRAM-SHA-1\u{1E}SCRAM-SHA-1-PLUS\u{1F}tls-exporter\u{1E}tls-server-end-point")
        #expect(base64(Digest.sha1(offer.downgradeProtectionInput)) == "G6k/rBLDqgOhRRaCuuatSDFkJ08=")

        var client = try xepClient(offer)
        #expect(text(client.clientFirst()) == "p=tls-exporter,,n=user,r=\(Self.xepNonce)")
        let clientFinal = text(try client.receive(serverFirst: bytes(Self.xepServerFirst)))
        #expect(clientFinal.hasPrefix("c=cD10bHMtZXhwb3J0ZXIsLFRISVMgSVMgRkFLRSBDQiBEQVRB,r=\(Self.xepServerNonce),p="))
        #expect(client.downgradeProtectionVerified)
    }

    @Test func downgradeProtectionHashMismatchIsRefused() throws {
        let stripped = SASLOffer(mechanisms: ["SCRAM-SHA-1"], channelBindingTypes: ["tls-server-end-point", "tls-exporter"])
        var client = try xepClient(stripped)
        #expect(throws: SCRAMError.downgradeDetected) { try client.receive(serverFirst: bytes(Self.xepServerFirst)) }
        #expect(!client.downgradeProtectionVerified)

        var unchecked = try xepClient(nil)
        _ = try unchecked.receive(serverFirst: bytes(Self.xepServerFirst))
        #expect(!unchecked.downgradeProtectionVerified)
    }

    @Test func offerWithoutChannelBindingElementHasNoSeparator() {
        #expect(SASLOffer(mechanisms: ["B", "A"], channelBindingTypes: nil).downgradeProtectionInput == bytes("A\u{1E}B"))
        #expect(SASLOffer(mechanisms: ["A"], channelBindingTypes: []).downgradeProtectionInput == bytes("A\u{1F}"))
    }

    @Test func iterationCountBelowTheFloorIsRefused() throws {
        var client = try sha1Client()
        #expect(throws: SCRAMError.iterationCountRefused(4095, accepted: 4096...1_000_000)) {
            try client.receive(serverFirst: bytes(Self.sha1ServerFirst.replacingOccurrences(of: "i=4096", with: "i=4095")))
        }
        var lenient = try SCRAMClient(hash: .sha1, username: "user", credential: .password("pencil"),
                                      nonce: Self.sha1Nonce, acceptedIterations: 1...10)
        let clientFinal = try lenient.receive(serverFirst: bytes(
            Self.sha1ServerFirst.replacingOccurrences(of: "i=4096", with: "i=1")))
        #expect(text(clientFinal).hasPrefix("c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p="))
        #expect(text(clientFinal) != Self.sha1ClientFinal)
    }

    @Test func malformedOrMandatoryServerFirstIsRefused() throws {
        let cases: [(String, SCRAMError)] = [
            ("m=ext,r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=QSXCR+Q6sek8bf92,i=4096", .unsupportedMandatoryExtension),
            ("s=QSXCR+Q6sek8bf92,r=fyko+d2lbbFgONRv9qkxdawL3rfc,i=4096", .malformedServerMessage(.missingNonce)),
            ("r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=not base64!,i=4096", .malformedServerMessage(.invalidSalt)),
            ("r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=QSXCR+Q6sek8bf92,i=04096", .malformedServerMessage(.invalidIterationCount)),
            ("r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=QSXCR+Q6sek8bf92,x=1", .malformedServerMessage(.missingIterationCount)),
            ("r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=QSXCR+Q6sek8bf92,i=4096,h=%%", .malformedServerMessage(.invalidDowngradeHash)),
        ]
        for (message, error) in cases {
            var client = try sha1Client()
            #expect(throws: error) { try client.receive(serverFirst: bytes(message)) }
        }
    }

    @Test func messagesOutOfOrderAreRefused() throws {
        var client = try sha1Client()
        #expect(throws: SCRAMError.unexpectedMessage) { try client.receive(serverFinal: bytes(Self.sha1ServerFinal)) }
        _ = try client.receive(serverFirst: bytes(Self.sha1ServerFirst))
        #expect(throws: SCRAMError.unexpectedMessage) { try client.receive(serverFirst: bytes(Self.sha1ServerFirst)) }
    }

    @Test func digestPrimitivesMatchPublishedVectors() {
        // RFC 6070 §2 (PBKDF2-HMAC-SHA1) and RFC 2202 §3 test case 2 (HMAC-SHA-1).
        #expect(Digest.hex(Digest.pbkdf2(password: bytes("password"), salt: bytes("salt"), iterations: 4096, hash: .sha1))
            == "4b007901b765489abead49d926f721d065a429c1")
        #expect(Digest.hex(Digest.hmacSHA1(key: bytes("Jefe"), message: bytes("what do ya want for nothing?")))
            == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        #expect(Digest.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!Digest.constantTimeEqual([1, 2, 3], [1, 2, 4]))
    }
}
