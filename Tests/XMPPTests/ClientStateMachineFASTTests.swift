import Foundation
import IsthmusCommon
import TestSupport
import Testing
import XMLStream
import XMPP

/// XEP-0484 FAST tokens and the salted-password cache as literal chains: a token asked for with the password, the
/// next login made with it (HT-SHA-256-ENDP over the channel's tls-server-end-point data, 32 × 9 here), its rotation,
/// its refusal (forgotten, the password next), and SCRAM with a cached salted password instead of PBKDF2.
/// The HT values come from Python's hmac (draft-schmaus-kitten-sasl-ht-08 §4 computed independently).
@Suite struct ClientStateMachineFASTTests {
    typealias Fixture = ClientSASL2Fixture
    let t0 = ContinuousClock.now
    static let fast = "<fast xmlns='urn:xmpp:fast:0'><mechanism>HT-SHA-256-ENDP</mechanism><mechanism>HT-SHA-256-NONE</mechanism></fast>"
    static let token = FASTToken(mechanism: HashedTokenMechanism(binding: .tlsServerEndPoint), secret: "secret-token:fast-abc",
                                 expiry: "2026-12-31T00:00:00Z")
    /// base64("user" NUL HMAC-SHA-256("secret-token:fast-abc", "Initiator" || 32 × 9)).
    static let initiator = "dXNlcgADtG5MtTBZem3/4LvoBcyrjvqJvGUPB7CvF0NBED+5tA=="
    /// base64(HMAC-SHA-256("secret-token:fast-abc", "Responder" || 32 × 9)).
    static let responder = "bIS1IK5kAMhhcY0E0WWJELqVdLiaXhKOsuACUHk1J64="

    func withToken(_ token: FASTToken = Self.token) -> ClientStateMachine {
        Fixture.opened(credentials: CredentialCache(fastToken: token), now: t0)
    }

    func htSuccess(_ responder: String = Self.responder, more: String = "") -> XMLStreamEvent {
        Fixture.event("""
            <success xmlns='urn:xmpp:sasl:2'><additional-data>\(responder)</additional-data>\
            <authorization-identifier>\(Fixture.bound)</authorization-identifier><bound xmlns='urn:xmpp:bind:0'/>\(more)</success>
            """)
    }

    @Test func thePasswordLoginAsksForATokenForTheStrongestMechanismAndKeepsIt() {
        var m = Fixture.opened(now: t0)
        #expect(m.received(Fixture.features(inline: Fixture.bind2Only + Self.fast), now: t0) == [
            Fixture.authenticate("SCRAM-SHA-1", Fixture.b64("n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"), inside: """
                <bind xmlns='urn:xmpp:bind:0'><tag>Isthmus</tag></bind><request-token xmlns='urn:xmpp:fast:0' mechanism='HT-SHA-256-ENDP'/>
                """),
        ])
        _ = m.received(Fixture.sasl2("challenge", Fixture.sha1ServerFirst), now: t0)
        let token = "<token xmlns='urn:xmpp:fast:0' expiry='2026-12-31T00:00:00Z' token='secret-token:fast-abc'/>"
        #expect(m.received(Fixture.success(Fixture.bound.description, more: "<bound xmlns='urn:xmpp:bind:0'/>" + token), now: t0)
            == [.authenticated(saltedPassword: Fixture.sha1Salted), .fastToken(Self.token), .bound(Fixture.bound)])
        #expect(m.credentials == CredentialCache(saltedPassword: Fixture.sha1Salted, fastToken: Self.token))
        #expect(m.sasl2 == .init(bind2: true, fastOffered: true))
    }

    @Test func theNextLoginUsesTheTokenWithItsCountAndTakesTheRotatedOne() {
        var m = withToken()
        var used = Self.token
        used.count = 1
        #expect(m.received(Fixture.features(inline: Fixture.bind2Only + Self.fast), now: t0) == [
            .fastToken(used),
            Fixture.authenticate("HT-SHA-256-ENDP", Self.initiator, inside: """
                <bind xmlns='urn:xmpp:bind:0'><tag>Isthmus</tag></bind><fast xmlns='urn:xmpp:fast:0' count='1'/>
                """),
        ], "the count is kept before the attempt; no token is asked for when one is used")
        let rotated = "<token xmlns='urn:xmpp:fast:0' expiry='2027-01-21T00:00:00Z' token='secret-token:fast-def'/>"
        let next = FASTToken(mechanism: Self.token.mechanism, secret: "secret-token:fast-def", expiry: "2027-01-21T00:00:00Z")
        #expect(m.received(htSuccess(more: rotated), now: t0) == [.authenticated(saltedPassword: nil), .fastToken(next), .bound(Fixture.bound)])
        #expect(m.mechanism == SASLMechanismName("HT-SHA-256-ENDP") && m.sasl2?.fastLogin == true)
        #expect(m.credentials.fastToken == next)
    }

    @Test func aRefusedTokenIsForgottenAndTheNextAttemptComesAtOnceWithThePassword() {
        var m = withToken()
        _ = m.received(Fixture.features(inline: Fixture.bind2Only + Self.fast), now: t0)
        let refusal = ClientError.keptCredentialRefused(.fastToken, .credentialsExpired, text: nil)
        #expect(m.received(Fixture.event("""
            <failure xmlns='urn:xmpp:sasl:2'><credentials-expired xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/></failure>
            """), now: t0) == [.fastToken(nil), .sendStreamEnd, .disconnect(refusal)])
        #expect(refusal.retriesAtOnce && !ClientError.authenticationFailed(.notAuthorized, text: nil).retriesAtOnce)
        // The next connection (the machine is made with what the last one left) logs in with the password.
        var next = Fixture.opened(credentials: m.credentials, now: t0)
        #expect(next.received(Fixture.features(inline: Self.fast), now: t0) == [
            Fixture.authenticate("SCRAM-SHA-1", Fixture.b64("n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"),
                                 inside: "<request-token xmlns='urn:xmpp:fast:0' mechanism='HT-SHA-256-ENDP'/>"),
        ])
    }

    @Test func aServerThatDoesNotKnowTheTokenCannotFakeItsAnswer() {
        var m = withToken()
        _ = m.received(Fixture.features(inline: Fixture.bind2Only + Self.fast), now: t0)
        #expect(m.received(htSuccess(Fixture.b64("not the responder message")), now: t0)
            == [.sendStreamEnd, .disconnect(.hashedToken(.responderMismatch))])
        #expect(!m.isConnected)
    }

    @Test func aTokenIsNotUsedWhereItCannotBeAndNeverOutsideTLS() {
        var otherMechanism = withToken()
        #expect(otherMechanism.received(Fixture.features(inline: "<fast xmlns='urn:xmpp:fast:0'><mechanism>HT-SHA-256-NONE</mechanism></fast>"), now: t0)
            == [Fixture.authenticate("SCRAM-SHA-1", Fixture.b64("n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"),
                                     inside: "<request-token xmlns='urn:xmpp:fast:0' mechanism='HT-SHA-256-NONE'/>")],
                "the server no longer offers the token's mechanism: the password, and a token for what it offers")
        var loopback = Fixture.configuration
        loopback.allowPlaintext = true
        var plaintext = ClientStateMachine(configuration: loopback, credentials: CredentialCache(fastToken: Self.token), nonce: Fixture.sha1Nonce)
        _ = plaintext.connectionOpened(now: t0)
        _ = plaintext.received(.streamStart(Fixture.serverHeader), now: t0)
        #expect(plaintext.received(Fixture.features(inline: Self.fast), now: t0)
            == [Fixture.authenticate("SCRAM-SHA-1", Fixture.b64("n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"))],
                "without TLS neither the token nor a request for one goes (draft-schmaus-kitten-sasl-ht §1.2)")
        var declined = Fixture.configuration
        declined.fastTokens = false
        var off = Fixture.opened(declined, credentials: CredentialCache(fastToken: Self.token), now: t0)
        #expect(off.received(Fixture.features(inline: Self.fast), now: t0)
            == [Fixture.authenticate("SCRAM-SHA-1", Fixture.b64("n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"))])
    }

    // MARK: The salted password

    /// The configured password is wrong here: only the cached salted password can produce RFC 5802's proof.
    @Test func aCachedSaltedPasswordForTheServersSaltIsUsedInsteadOfThePassword() {
        var wrong = Fixture.configuration
        wrong.credential = .password("not pencil")
        var m = Fixture.opened(wrong, credentials: CredentialCache(saltedPassword: Fixture.sha1Salted), now: t0)
        _ = m.received(Fixture.features(), now: t0)
        #expect(m.received(Fixture.sasl2("challenge", Fixture.sha1ServerFirst), now: t0) == [Fixture.response(Fixture.sha1ClientFinal)])
        #expect(m.received(Fixture.success(), now: t0) == [.authenticated(saltedPassword: Fixture.sha1Salted)])
    }

    @Test func aCacheForAnotherSaltFallsBackToThePassword() {
        var stale = Fixture.sha1Salted
        stale.salt = Array("another salt".utf8)
        var m = Fixture.opened(credentials: CredentialCache(saltedPassword: stale), now: t0)
        _ = m.received(Fixture.features(), now: t0)
        #expect(m.received(Fixture.sasl2("challenge", Fixture.sha1ServerFirst), now: t0) == [Fixture.response(Fixture.sha1ClientFinal)])
        #expect(m.received(Fixture.success(), now: t0) == [.authenticated(saltedPassword: Fixture.sha1Salted)], "the new one replaces it")
    }

    /// Legacy SASL uses the cache too; a refusal of an exchange made with it forgets it and asks for the password at once.
    @Test func aRefusedCachedSaltedPasswordIsForgotten() {
        var m = ClientStateMachine(configuration: Fixture.configuration, credentials: CredentialCache(saltedPassword: Fixture.sha1Salted),
                                   nonce: Fixture.sha1Nonce)
        _ = m.connectionOpened(now: t0, directTLS: Fixture.tls)
        _ = m.received(.streamStart(Fixture.serverHeader), now: t0)
        _ = m.received(Fixture.event("""
            <stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>SCRAM-SHA-1</mechanism></mechanisms>\
            </stream:features>
            """), now: t0)
        _ = m.received(Fixture.event("<challenge xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(Fixture.b64(Fixture.sha1ServerFirst))</challenge>"), now: t0)
        #expect(m.received(Fixture.event("<failure xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><not-authorized/></failure>"), now: t0)
            == [.saltedPasswordRefused, .sendStreamEnd, .disconnect(.keptCredentialRefused(.saltedPassword, .notAuthorized, text: nil))])
        #expect(m.credentials.saltedPassword == nil)
    }
}
