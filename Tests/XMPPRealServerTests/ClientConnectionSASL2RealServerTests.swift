import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPPClient

/// The bridge's own account against the bed's SASL2 host (Prosody 0.12.3 with mod_sasl2 and mod_sasl2_bind2): SASL2
/// with Bind2, XEP-0198 enabled and resumed after the features (the inline forms need trunk's mod_smacks), the
/// resource kept per user-agent id, and the cached salted password on both hosts. FAST cannot run on 0.12.3: it is
/// tested against a scripted endpoint (`ClientConnectionFASTTests`). On ejabberd 23.01, which has no SASL2, each test
/// checks instead that the account logs in with legacy SASL.
final class ClientConnectionSASL2RealServerTests: XCTestCase {
    /// The SASL2 host; nil on ejabberd 23.01, once a login there showed that it goes through legacy SASL instead.
    func sasl2Domain(_ bed: TestBed) async throws -> String? {
        if let domain = try bed.sasl2DomainIfOffered() { return domain }
        let client = RealClient(bed, in: self, stream: RealClient.stream(bed, resource: "legacy-\(UUID().uuidString.prefix(8))"))
        guard case .connected = try await client.next("the legacy login") else {
            XCTFail("no login without SASL2")
            return nil
        }
        let negotiated = await client.connection.negotiated
        XCTAssertNil(negotiated?.sasl2, "ejabberd 23.01 offers no SASL2: the login is legacy SASL")
        XCTAssertNotNil(negotiated?.mechanism)
        return nil
    }

    func testLogsInWithSASL2AndBind2ThenEnablesStreamManagement() async throws {
        let bed = try TestBed.fromEnvironment()
        guard let domain = try await sasl2Domain(bed) else { return }
        let client = RealClient(bed, in: self, stream: RealClient.stream(bed, domain: domain, resource: "ignored-by-bind2", ackEvery: 1))
        guard case .connected(let jid, resumed: false) = try await client.next("the SASL2 login") else { return XCTFail("no login") }
        XCTAssertEqual(jid.bare, JID("carol@\(domain)"))
        XCTAssertTrue(jid.resource?.hasPrefix("Isthmus~") == true, "Bind2 makes the resource from our tag: \(jid)")
        let negotiated = await client.connection.negotiated
        XCTAssertEqual(negotiated?.sasl2, .init(bind2: true, inlineStreamManagement: false), "0.12.3: XEP-0198 after the features")
        XCTAssertEqual(negotiated?.mechanism, SASLMechanismName("SCRAM-SHA-1"))
        XCTAssertEqual(negotiated?.resumable, true)

        let ping = RealClient.ping(domain, id: "sasl2-ping")
        try await client.connection.send(ping)
        var answered = false, acknowledged = false
        while !(answered && acknowledged) {
            switch try await client.next("the pong and the ack") {
            case .stanza(.iq(let iq), _) where iq.id == StanzaAttributeID("sasl2-ping"):
                XCTAssertEqual(iq.type, .result)
                await client.connection.handled()
                answered = true
            case .acknowledged(let stanzas):
                XCTAssertEqual(stanzas, [ping])
                acknowledged = true
            case let other:
                XCTFail("unexpected \(other)")
            }
        }
    }

    /// Bind2 derives the resource from the user-agent id: the bridge keeps the id, so a restart binds the same one.
    func testTheSameUserAgentIsBoundToTheSameResource() async throws {
        let bed = try TestBed.fromEnvironment()
        guard let domain = try await sasl2Domain(bed) else { return }
        let agent = SASL2UserAgent.random(device: "test")
        var jids: [JID] = []
        for userAgent in [agent, agent, .random(device: "test")] {
            let client = RealClient(bed, in: self, stream: RealClient.stream(bed, domain: domain, resource: "r", userAgent: userAgent))
            guard case .connected(let jid, _) = try await client.next("a login") else { return XCTFail("no login") }
            jids.append(jid)
            await client.connection.close()
            await client.runner.stop()
        }
        XCTAssertEqual(jids[0], jids[1], "the same id, the same resource")
        XCTAssertNotEqual(jids[0], jids[2], "another id, another resource")
    }

    /// The shape of the legacy host's crash test: the unhandled pong comes again after the resumption — here taken up
    /// after SASL2 (with `<resume/>` after the features, since Bind2 must not bind first).
    func testACrashedSessionIsResumedAfterSASL2AndWhatWasNotHandledComesAgain() async throws {
        let bed = try TestBed.fromEnvironment()
        guard let domain = try await sasl2Domain(bed) else { return }
        let stream = RealClient.stream(bed, domain: domain, resource: "r", userAgent: .random(device: "test"))
        let first = RealClient(bed, in: self, stream: stream)
        guard case .connected(let jid, resumed: false) = try await first.next("the first login") else { return XCTFail("no login") }
        let beforeCrash = RealClient.ping(domain, id: "before-crash")
        try await first.connection.send(beforeCrash)
        guard case .stanza(.iq(let answer), _) = try await first.next("the pong"), answer.id == StanzaAttributeID("before-crash") else {
            return XCTFail("no pong")
        }
        await first.runner.stop()   // cancelled: the socket drops, the stream is never closed
        let kept = await first.connection.resumption
        let session = try XCTUnwrap(kept, "a resumable session is kept")

        let second = RealClient(bed, in: self, stream: stream, resuming: session)
        let confirmed = try await second.next("the server's count in <resumed h>")
        XCTAssertEqual(confirmed, .acknowledged([beforeCrash]))
        let resent = try await second.next("the resend count")
        XCTAssertEqual(resent, .resumed(resent: 0))
        let resumed = try await second.next("the resumption")
        XCTAssertEqual(resumed, .connected(jid, resumed: true), "the same session, no Bind2")
        guard case .stanza(.iq(let again), _) = try await second.next("the unhandled pong, again") else { return XCTFail("no pong again") }
        XCTAssertEqual(again.id, StanzaAttributeID("before-crash"))
        let negotiated = await second.connection.negotiated
        XCTAssertEqual(negotiated?.sasl2, .init(bind2: false, inlineStreamManagement: false))
    }

    /// On both hosts (legacy SASL and SASL2): a salted password kept from a login logs in although the configured
    /// password is wrong — no PBKDF2 on the password; a stale one (same salt, other bytes) is refused, forgotten, and
    /// the password logs in at once.
    func testTheCachedSaltedPasswordLogsInAndAStaleOneFallsBackToThePassword() async throws {
        let bed = try TestBed.fromEnvironment()
        for domain in [bed.xmppDomain] + [try bed.sasl2DomainIfOffered()].compactMap({ $0 }) {
            let first = RealClient(bed, in: self, stream: RealClient.stream(bed, domain: domain, resource: "cache-1"))
            guard case .authenticated(let salted) = try await first.events.next(within: 10, "the salted password") else {
                return XCTFail("no salted password on \(domain)")
            }
            await first.connection.close()

            let wrong = RealClient.stream(bed, domain: domain, password: "not the password", resource: "cache-2")
            let cached = RealClient(bed, in: self, stream: wrong, credentials: CredentialCache(saltedPassword: salted))
            guard case .connected = try await cached.next("a login with the cached salted password") else {
                return XCTFail("the cached salted password did not log in on \(domain)")
            }
            await cached.connection.close()

            var stale = salted
            stale.bytes = stale.bytes.map { $0 ^ 0xFF }
            let fallback = RealClient(bed, in: self, stream: RealClient.stream(bed, domain: domain, resource: "cache-3"),
                                      credentials: CredentialCache(saltedPassword: stale))
            guard case .disconnected(.keptCredentialRefused(.saltedPassword, let condition, _)) = try await fallback.next("the refusal") else {
                return XCTFail("a stale salted password was not refused on \(domain)")
            }
            XCTAssertEqual(condition, .notAuthorized)
            guard case .connected = try await fallback.next("the password's login, at once") else { return XCTFail("no fallback on \(domain)") }
            let now = await fallback.connection.credentials.saltedPassword
            XCTAssertEqual(now, salted, "the password's salted password replaced the stale one")
        }
    }
}
