import Foundation
import IsthmusCommon
import TestSupport
import Testing
import XMLStream
import XMPP

/// SASL2 (XEP-0388) with Bind2 (XEP-0386) and inline XEP-0198, as literal chains: the RFC 5802/7677 examples framed
/// in SASL2, what a `<success>` settles, and what is refused.
@Suite struct ClientStateMachineSASL2Tests {
    typealias Fixture = ClientSASL2Fixture
    let t0 = ContinuousClock.now

    @Test func scramSHA1InSASL2WithBind2AndInlineStreamManagementEstablishesWithoutARestart() throws {
        var m = Fixture.opened(now: t0)
        #expect(m.received(Fixture.features(inline: Fixture.inlineEverything), now: t0) == [
            Fixture.authenticate("SCRAM-SHA-1", Fixture.b64("n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"), inside: """
                <bind xmlns='urn:xmpp:bind:0'><tag>Isthmus</tag><enable xmlns='urn:xmpp:sm:3' resume='true'/></bind>
                """),
        ])
        #expect(m.received(Fixture.sasl2("challenge", Fixture.sha1ServerFirst), now: t0) == [Fixture.response(Fixture.sha1ClientFinal)])
        let bound = "<bound xmlns='urn:xmpp:bind:0'><enabled xmlns='urn:xmpp:sm:3' id='sm-1' resume='1' max='600'/></bound>"
        #expect(m.received(Fixture.success(Fixture.bound.description, more: bound), now: t0)
            == [.authenticated(saltedPassword: Fixture.sha1Salted), .bound(Fixture.bound), .established(Fixture.bound)],
                "no .resetParser, no stream header: SASL2 does not restart the stream")
        #expect(m.isConnected && m.jid == Fixture.bound && m.streamManagement?.sessionID == "sm-1")
        #expect(m.sasl2 == .init(bind2: true, inlineStreamManagement: true))
        // The features that follow success (XEP-0388 §4.5.1) change nothing; stanzas then count as usual.
        #expect(m.received(Fixture.event("<stream:features><sm xmlns='urn:xmpp:sm:3'/></stream:features>"), now: t0) == [])
        let incoming = "<message xmlns='jabber:client' from='room@conference.example.com/a' type='groupchat' id='x1'><body>hi</body></message>"
        #expect(m.received(Fixture.event(incoming), now: t0) == [.deliver(try Stanza(element: TestXML.element(incoming)))])
        m.handled()
        #expect(m.received(Fixture.event("<r xmlns='urn:xmpp:sm:3'/>"), now: t0) == [.sendNonza(.ack(h: 1))])
    }

    @Test func scramSHA256InSASL2IsRFC7677Framed() {
        var m = Fixture.opened(nonce: Fixture.sha256Nonce, now: t0)
        #expect(m.received(Fixture.features(["SCRAM-SHA-256", "SCRAM-SHA-1"], bindings: nil), now: t0)
            == [Fixture.authenticate("SCRAM-SHA-256", Fixture.b64("y,,n=user,r=rOprNGfwEbeRWgbNEkqO"))],
                "inside TLS with no -PLUS offered: y,, (we could bind, the server cannot)")
        var plain = Fixture.opened(nonce: Fixture.sha256Nonce, now: t0)
        _ = plain.received(Fixture.features(["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"]), now: t0)
        #expect(plain.received(Fixture.sasl2("challenge", Fixture.sha256ServerFirst), now: t0) == [Fixture.response(Fixture.sha256ClientFinal)])
        let actions = plain.received(Fixture.success(serverFinal: Fixture.sha256ServerFinal), now: t0)
        guard case .authenticated(let salted?)? = actions.first else { Issue.record("no salted password: \(actions)"); return }
        #expect(salted.hash == .sha256 && salted.iterations == 4096)
        #expect(Array(actions.dropFirst()) == [], "no Bind2 offered: the features that follow decide")
        #expect(plain.state == .awaitingFeatures)
    }

    /// SCRAM-SHA-256-PLUS bound with tls-exporter (32 × 7 here); the expected proof and signature come from Python's
    /// hashlib (an independent computation of RFC 5802 over these bytes).
    @Test func channelBoundSCRAMInSASL2CarriesTheBindingData() {
        var m = Fixture.opened(nonce: Fixture.sha256Nonce, now: t0)
        #expect(m.received(Fixture.features(["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"], bindings: ["tls-exporter", "tls-server-end-point"]), now: t0)
            == [Fixture.authenticate("SCRAM-SHA-256-PLUS", Fixture.b64("p=tls-exporter,,n=user,r=rOprNGfwEbeRWgbNEkqO"))])
        #expect(m.received(Fixture.sasl2("challenge", Fixture.sha256ServerFirst), now: t0) == [Fixture.response("""
            c=cD10bHMtZXhwb3J0ZXIsLAcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcH,\
            r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=R2bHiXqaT4RLSd/UZxfg2gBdXS2SdQOUTTLyTSXHnZA=
            """)])
        let actions = m.received(Fixture.success(serverFinal: "v=KxSI8XUdIxGURZaCAWDeABIWU/CJ/li73fGLRvz4Lw0="), now: t0)
        #expect(actions.count == 1 && m.mechanism == SASLMechanismName("SCRAM-SHA-256-PLUS"), "\(actions)")
    }

    @Test func aWrongServerSignatureInTheSuccessIsRefused() {
        var m = Fixture.opened(now: t0)
        _ = m.received(Fixture.features(inline: Fixture.bind2Only), now: t0)
        _ = m.received(Fixture.sasl2("challenge", Fixture.sha1ServerFirst), now: t0)
        #expect(m.received(Fixture.success(Fixture.bound.description, more: "<bound xmlns='urn:xmpp:bind:0'/>",
                                           serverFinal: "v=AAAAAAAAAAAAAAAAAAAAAAAAAAA="), now: t0)
            == [.sendStreamEnd, .disconnect(.scram(.serverSignatureMismatch))])
        #expect(!m.isConnected && m.jid == nil)
    }

    /// Prosody 0.12.3: Bind2 without XEP-0198 inside it; `<enable/>` goes after the features that follow success, and a
    /// stanza the room routes to the new resource before `<enabled/>` waits, uncounted.
    @Test func bind2WithoutInlineStreamManagementEnablesAfterTheFeatures() {
        var m = Fixture.opened(now: t0)
        #expect(m.received(Fixture.features(inline: Fixture.bind2Only), now: t0) == [
            Fixture.authenticate("SCRAM-SHA-1", Fixture.b64("n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"),
                                 inside: "<bind xmlns='urn:xmpp:bind:0'><tag>Isthmus</tag></bind>"),
        ])
        _ = m.received(Fixture.sasl2("challenge", Fixture.sha1ServerFirst), now: t0)
        #expect(m.received(Fixture.success(Fixture.bound.description, more: "<bound xmlns='urn:xmpp:bind:0'/>"), now: t0)
            == [.authenticated(saltedPassword: Fixture.sha1Salted), .bound(Fixture.bound)])
        #expect(m.received(Fixture.event("""
            <stream:features><sm xmlns='urn:xmpp:sm:3'><optional/></sm><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><required/></bind>\
            </stream:features>
            """), now: t0) == [.sendNonza(.enable(resume: true, max: nil))], "bound already: no legacy bind")
        let presence = "<presence xmlns='jabber:client' from='room@conference.example.com/Other' to='\(Fixture.bound)'/>"
        #expect(m.received(Fixture.event(presence), now: t0) == [])
        #expect(m.received(Fixture.event("<enabled xmlns='urn:xmpp:sm:3' id='sm-9' resume='true'/>"), now: t0)
            == [.established(Fixture.bound), .deliver(try! Stanza(element: TestXML.element(presence)))])
        m.handled()
        #expect(m.streamManagement?.inboundHandled == 0, "the server did not count it")
        #expect(m.sasl2 == .init(bind2: true, inlineStreamManagement: false))
    }

    @Test func withoutBind2TheFeaturesAfterSuccessLeadToALegacyBind() {
        var m = Fixture.opened(now: t0)
        _ = m.received(Fixture.features(), now: t0)
        _ = m.received(Fixture.sasl2("challenge", Fixture.sha1ServerFirst), now: t0)
        #expect(m.received(Fixture.success(), now: t0) == [.authenticated(saltedPassword: Fixture.sha1Salted)])
        let bind = Stanza.iq(IQ(type: .set, id: StanzaAttributeID("bind-1")!, payload: .other(
            XElement("bind", namespace: XMPPNamespace.bind, children: [
                .element(XElement("resource", namespace: XMPPNamespace.bind, children: [.text("isthmus")])),
            ]))))
        #expect(m.received(Fixture.event("<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>"), now: t0)
            == [.send(bind)])
    }

    // MARK: Inline resumption

    @Test func aKeptSessionIsResumedInlineWithItsResendsAndAcks() {
        var m = Fixture.opened(resuming: Fixture.kept(unacknowledged: [Fixture.message(2), Fixture.message(3)]), now: t0)
        #expect(m.received(Fixture.features(inline: Fixture.inlineEverything), now: t0) == [
            Fixture.authenticate("SCRAM-SHA-1", Fixture.b64("n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"), inside: """
                <resume xmlns='urn:xmpp:sm:3' previd='sm-1' h='7'/>\
                <bind xmlns='urn:xmpp:bind:0'><tag>Isthmus</tag><enable xmlns='urn:xmpp:sm:3' resume='true'/></bind>
                """),
        ])
        _ = m.received(Fixture.sasl2("challenge", Fixture.sha1ServerFirst), now: t0)
        #expect(m.received(Fixture.success(Fixture.bound.description, more: "<resumed xmlns='urn:xmpp:sm:3' previd='sm-1' h='2'/>"), now: t0) == [
            .authenticated(saltedPassword: Fixture.sha1Salted), .acknowledged([Fixture.message(2)]),
            .resumed(resend: [Fixture.message(3)]), .send(Fixture.message(3)), .established(Fixture.bound),
        ])
        #expect(m.streamManagement?.inboundHandled == 7 && m.streamManagement?.unacknowledged == [Fixture.message(3)])
        #expect(m.sasl2?.inlineStreamManagement == true && m.sasl2?.bind2 == false)
        #expect(m.received(Fixture.event("<stream:features/>"), now: t0) == [], "Prosody sends features after a resumed success too")
    }

    @Test func aFailedInlineResumptionIsReportedAndBind2BindsANewSession() {
        var m = Fixture.opened(resuming: Fixture.kept(unacknowledged: [Fixture.message(2), Fixture.message(3)]), now: t0)
        _ = m.received(Fixture.features(inline: Fixture.inlineEverything), now: t0)
        _ = m.received(Fixture.sasl2("challenge", Fixture.sha1ServerFirst), now: t0)
        let more = """
            <failed xmlns='urn:xmpp:sm:3' h='2'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></failed>\
            <bound xmlns='urn:xmpp:bind:0'><enabled xmlns='urn:xmpp:sm:3' id='sm-2' resume='true'/></bound>
            """
        #expect(m.received(Fixture.success(Fixture.bound.description, more: more), now: t0) == [
            .authenticated(saltedPassword: Fixture.sha1Salted), .acknowledged([Fixture.message(2)]),
            .resumeFailed(unknown: [Fixture.message(3)]), .bound(Fixture.bound), .established(Fixture.bound),
        ])
        #expect(m.streamManagement?.sessionID == "sm-2" && m.streamManagement?.unacknowledged == [])
    }

    /// Prosody 0.12.3 offers no inline resumption: nothing is bound in the authentication, and the kept session is
    /// resumed with `<resume/>` after the features (a server refuses to resume a stream that bound a resource).
    @Test func withoutInlineResumptionTheKeptSessionIsResumedAfterTheFeatures() {
        var m = Fixture.opened(resuming: Fixture.kept(unacknowledged: [Fixture.message(2)]), now: t0)
        #expect(m.received(Fixture.features(inline: Fixture.bind2Only), now: t0)
            == [Fixture.authenticate("SCRAM-SHA-1", Fixture.b64("n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"))], "no Bind2, no resume inside")
        _ = m.received(Fixture.sasl2("challenge", Fixture.sha1ServerFirst), now: t0)
        #expect(m.received(Fixture.success(), now: t0) == [.authenticated(saltedPassword: Fixture.sha1Salted)])
        #expect(m.received(Fixture.event("""
            <stream:features><sm xmlns='urn:xmpp:sm:3'/><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>
            """), now: t0) == [.sendNonza(.resume(previd: "sm-1", h: 7))])
        #expect(m.received(Fixture.event("<resumed xmlns='urn:xmpp:sm:3' previd='sm-1' h='2'/>"), now: t0)
            == [.acknowledged([Fixture.message(2)]), .resumed(resend: []), .established(Fixture.bound)])
    }

    // MARK: Refusals

    @Test func aFailureIsTypedWithItsConditionAndText() {
        var m = Fixture.opened(now: t0)
        _ = m.received(Fixture.features(), now: t0)
        #expect(m.received(Fixture.event("""
            <failure xmlns='urn:xmpp:sasl:2'><not-authorized xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/><text>Wrong password</text></failure>
            """), now: t0) == [.sendStreamEnd, .disconnect(.authenticationFailed(.notAuthorized, text: "Wrong password"))])
        var disabled = Fixture.opened(now: t0)
        _ = disabled.received(Fixture.features(), now: t0)
        #expect(disabled.received(Fixture.event("""
            <failure xmlns='urn:xmpp:sasl:2'><account-disabled xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/></failure>
            """), now: t0) == [.sendStreamEnd, .disconnect(.authenticationFailed(.accountDisabled, text: nil))])
    }

    @Test func aContinueWithTasksIsRefusedClearly() {
        var m = Fixture.opened(now: t0)
        _ = m.received(Fixture.features(), now: t0)
        _ = m.received(Fixture.sasl2("challenge", Fixture.sha1ServerFirst), now: t0)
        let actions = m.received(Fixture.event("""
            <continue xmlns='urn:xmpp:sasl:2'><additional-data>\(Fixture.b64(Fixture.sha1ServerFinal))</additional-data>\
            <tasks><task>TOTP-EXAMPLE</task></tasks><text>This account requires 2FA</text></continue>
            """), now: t0)
        #expect(actions == [.sendStreamEnd, .disconnect(.sasl2TasksRequired(["TOTP-EXAMPLE"], text: "This account requires 2FA"))])
        #expect(!m.isConnected)
    }

    @Test func xep0440RefusalsUnderSASL2() {
        var unannounced = Fixture.opened(now: t0)
        #expect(unannounced.received(Fixture.features(["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"], bindings: nil), now: t0)
            == [.sendStreamEnd, .disconnect(.noUsableMechanism(.channelBindingNotAnnounced))], "-PLUS without announced types")
        var missing = Fixture.opened(now: t0)
        #expect(missing.received(Fixture.features(["SCRAM-SHA-256"], bindings: ["tls-exporter"]), now: t0)
            == [.sendStreamEnd, .disconnect(.noUsableMechanism(.plusMechanismsMissing))], "announced types without -PLUS")
    }

    @Test func aLegacySASLElementDuringSASL2IsAViolation() {
        var m = Fixture.opened(now: t0)
        _ = m.received(Fixture.features(), now: t0)
        #expect(m.received(Fixture.event("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>"), now: t0).last
            == .disconnect(.protocolViolation("unexpected <success> during negotiation")))
    }

    /// The header names the account once the stream is encrypted (XEP-0484 needs it), never before on a network.
    @Test func theStreamHeaderNamesTheAccountOnlyInsideTLSOrOnLoopback() {
        var starttls = ClientStateMachine(configuration: Fixture.configuration, nonce: Fixture.sha1Nonce)
        #expect(starttls.connectionOpened(now: t0) == [.sendStreamHeader(to: "example.com", from: nil)])
        var direct = ClientStateMachine(configuration: Fixture.configuration, nonce: Fixture.sha1Nonce)
        #expect(direct.connectionOpened(now: t0, directTLS: Fixture.tls) == [.sendStreamHeader(to: "example.com", from: JID("user@example.com"))])
        var loopback = Fixture.configuration
        loopback.allowPlaintext = true
        var plaintext = ClientStateMachine(configuration: loopback, nonce: Fixture.sha1Nonce)
        #expect(plaintext.connectionOpened(now: t0) == [.sendStreamHeader(to: "example.com", from: JID("user@example.com"))])
    }
}
