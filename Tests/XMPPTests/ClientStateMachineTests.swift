import Foundation
import IsthmusCommon
import TestSupport
import Testing
import XMLStream
import XMPP

/// The c2s stream (RFC 6120 + XEP-0198) with literal events and injected time.
@Suite struct ClientStateMachineTests {
    typealias Machine = ClientStateMachine
    let t0 = ContinuousClock.now
    static let configuration = Machine.Configuration(
        domain: "example.com", username: "user", credential: .password("pencil"), resource: "isthmus",
        pingInterval: .seconds(30), pingTimeout: .seconds(10), handshakeTimeout: .seconds(20))
    static let nonce = "fyko+d2lbbFgONRv9qkxdawL"
    static let jid = JID("user@example.com/isthmus")!
    /// Our header's `from` once the stream is encrypted (RFC 6120 §4.7.1).
    static let account = JID("user@example.com")!
    static let tls = Machine.TLS(channel: SASLChoice.Channel(exporterUsable: true),
                                 bindingData: [.tlsExporter: Array(repeating: 7, count: 32)])
    static let serverHeader = StreamHeader(
        name: "stream", namespace: XMPPNamespace.streams, contentNamespace: XMPPNamespace.client,
        attributes: ["id": "s1", "from": "example.com"])

    static let startTLSFeatures = """
        <stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls></stream:features>
        """
    /// SCRAM-SHA-1 and -PLUS, but only a binding type the bridge cannot compute: unbound SCRAM-SHA-1 with `n,,`,
    /// so the RFC 5802 example applies byte for byte.
    static let saslFeatures = """
        <stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\
        <mechanism>SCRAM-SHA-1-PLUS</mechanism><mechanism>SCRAM-SHA-1</mechanism></mechanisms>\
        <sasl-channel-binding xmlns='urn:xmpp:sasl-cb:0'><channel-binding type='tls-unique'/></sasl-channel-binding>\
        </stream:features>
        """
    static let bindFeatures = """
        <stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/><sm xmlns='urn:xmpp:sm:3'/></stream:features>
        """
    static let serverFirst = "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096"
    static let clientFinal = "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts="
    static let serverFinal = "v=rmF9pqV8S7suAoZWja4dJRkFsKQ="

    func element(_ xml: String) -> XMLStreamEvent { .element(TestXML.element(xml)) }
    func b64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
    func sasl(_ name: String, _ text: String) -> XMLStreamEvent {
        element("<\(name) xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(b64(text))</\(name)>")
    }
    func saslElement(_ name: String, _ text: String, mechanism: String? = nil) -> XElement {
        XElement(name, namespace: XMPPNamespace.sasl, ["mechanism": mechanism], children: [.text(b64(text))])
    }
    static let bindRequest = Stanza.iq(IQ(type: .set, id: StanzaAttributeID("bind-1")!, payload: .other(
        XElement("bind", namespace: XMPPNamespace.bind, children: [
            .element(XElement("resource", namespace: XMPPNamespace.bind, children: [.text("isthmus")])),
        ]))))
    var bindResult: XMLStreamEvent {
        element("""
            <iq xmlns='jabber:client' type='result' id='bind-1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'>\
            <jid>user@example.com/isthmus</jid></bind></iq>
            """)
    }

    /// A machine through STARTTLS and SCRAM, waiting for the post-authentication features.
    func authenticated(resuming: Machine.Resumption? = nil) -> Machine {
        var m = Machine(configuration: Self.configuration, resuming: resuming, nonce: Self.nonce)
        _ = m.connectionOpened(now: t0, directTLS: Self.tls)
        _ = m.received(.streamStart(Self.serverHeader), now: t0)
        _ = m.received(element(Self.saslFeatures), now: t0)
        _ = m.received(sasl("challenge", Self.serverFirst), now: t0)
        _ = m.received(sasl("success", Self.serverFinal), now: t0)
        _ = m.received(.streamStart(Self.serverHeader), now: t0)
        return m
    }

    /// Established with XEP-0198 enabled (session `sm-1`).
    func established() -> Machine {
        var m = authenticated()
        _ = m.received(element(Self.bindFeatures), now: t0)
        _ = m.received(bindResult, now: t0)
        _ = m.received(element("<enabled xmlns='urn:xmpp:sm:3' id='sm-1' resume='true'/>"), now: t0)
        return m
    }

    func message(_ n: Int) -> Stanza {
        .message(Message(type: .groupchat, to: JID("room@conference.example.com"), id: StanzaAttributeID("m\(n)"), body: "hi \(n)"))
    }

    @Test func fullNegotiationWithSTARTTLSAndSCRAMSHA1ThroughBindAndEnable() {
        var m = Machine(configuration: Self.configuration, nonce: Self.nonce)
        #expect(m.connectionOpened(now: t0) == [.sendStreamHeader(to: "example.com")])
        #expect(m.received(.streamStart(Self.serverHeader), now: t0) == [])
        #expect(m.received(element(Self.startTLSFeatures), now: t0)
            == [.sendElement(XElement("starttls", namespace: XMPPNamespace.tls))])
        #expect(m.received(element("<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>"), now: t0) == [.startTLS])
        #expect(m.tlsEstablished(Self.tls) == [.resetParser, .sendStreamHeader(to: "example.com", from: Self.account)])
        #expect(m.received(.streamStart(Self.serverHeader), now: t0) == [])
        #expect(m.received(element(Self.saslFeatures), now: t0)
            == [.sendElement(saslElement("auth", "n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL", mechanism: "SCRAM-SHA-1"))])
        #expect(m.received(sasl("challenge", Self.serverFirst), now: t0) == [.sendElement(saslElement("response", Self.clientFinal))])
        let salt = Array(Data(base64Encoded: "QSXCR+Q6sek8bf92")!)
        let salted = SCRAMClient.SaltedPassword(hash: .sha1, salt: salt, iterations: 4096,
                                                bytes: Digest.pbkdf2(password: Array("pencil".utf8), salt: salt, iterations: 4096, hash: .sha1))
        #expect(m.received(sasl("success", Self.serverFinal), now: t0)
            == [.authenticated(saltedPassword: salted), .resetParser, .sendStreamHeader(to: "example.com", from: Self.account)])
        #expect(m.received(.streamStart(Self.serverHeader), now: t0) == [])
        #expect(m.received(element(Self.bindFeatures), now: t0) == [.send(Self.bindRequest)])
        #expect(m.received(bindResult, now: t0) == [.bound(Self.jid), .sendNonza(.enable(resume: true, max: nil))])
        #expect(!m.isConnected)
        #expect(m.received(element("<enabled xmlns='urn:xmpp:sm:3' id='sm-1' resume='true'/>"), now: t0) == [.established(Self.jid)])
        #expect(m.isConnected)
        #expect(m.streamManagement?.sessionID == "sm-1")
        #expect(m.jid == Self.jid)
    }

    @Test func withoutStreamManagementBindAloneEstablishes() throws {
        var m = authenticated()
        _ = m.received(element("<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>"), now: t0)
        #expect(m.received(bindResult, now: t0) == [.bound(Self.jid), .established(Self.jid)])
        #expect(m.streamManagement == nil)
        #expect(try m.send(message(1)) == [.send(message(1))])
    }

    @Test func plainIsRefusedWithoutTLSEvenWhenPlaintextIsAllowed() {
        var configuration = Self.configuration
        configuration.allowPlaintext = true
        var m = Machine(configuration: configuration, nonce: Self.nonce)
        _ = m.connectionOpened(now: t0)
        _ = m.received(.streamStart(Self.serverHeader), now: t0)
        let features = "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>"
        #expect(m.received(element(features), now: t0) == [.sendStreamEnd, .disconnect(.noUsableMechanism(.plainWithoutTLS))])
        #expect(m.state == .finished)
    }

    @Test func plainInsideTLSSendsNulUserNulPassword() {
        var m = Machine(configuration: Self.configuration, nonce: Self.nonce)
        _ = m.connectionOpened(now: t0, directTLS: Self.tls)
        _ = m.received(.streamStart(Self.serverHeader), now: t0)
        let features = "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>"
        #expect(m.received(element(features), now: t0) == [.sendElement(saslElement("auth", "\0user\0pencil", mechanism: "PLAIN"))])
        #expect(m.received(element("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>"), now: t0)
            == [.authenticated(saltedPassword: nil), .resetParser, .sendStreamHeader(to: "example.com", from: Self.account)])
    }

    @Test func plaintextIsRefusedUnlessAllowed() {
        let features = "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>SCRAM-SHA-1</mechanism></mechanisms></stream:features>"
        var refused = Machine(configuration: Self.configuration, nonce: Self.nonce)
        _ = refused.connectionOpened(now: t0)
        _ = refused.received(.streamStart(Self.serverHeader), now: t0)
        #expect(refused.received(element(features), now: t0) == [.sendStreamEnd, .disconnect(.tlsNotOffered)])

        var configuration = Self.configuration
        configuration.allowPlaintext = true
        var allowed = Machine(configuration: configuration, nonce: Self.nonce)
        _ = allowed.connectionOpened(now: t0)
        _ = allowed.received(.streamStart(Self.serverHeader), now: t0)
        #expect(allowed.received(element(features), now: t0)
            == [.sendElement(saslElement("auth", "n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL", mechanism: "SCRAM-SHA-1"))])
    }

    @Test func tlsFailureDisconnects() {
        var m = Machine(configuration: Self.configuration, nonce: Self.nonce)
        _ = m.connectionOpened(now: t0)
        _ = m.received(.streamStart(Self.serverHeader), now: t0)
        _ = m.received(element(Self.startTLSFeatures), now: t0)
        #expect(m.received(element("<failure xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>"), now: t0) == [.disconnect(.tlsRefused)])
    }

    @Test func channelBoundSCRAMUsesTheTLSBindingData() {
        var m = Machine(configuration: Self.configuration, nonce: Self.nonce)
        _ = m.connectionOpened(now: t0, directTLS: Self.tls)
        _ = m.received(.streamStart(Self.serverHeader), now: t0)
        let features = """
            <stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\
            <mechanism>SCRAM-SHA-1-PLUS</mechanism></mechanisms></stream:features>
            """
        // No XEP-0440 list: tls-server-end-point is assumed, and this TLS gave only exporter data.
        #expect(m.received(element(features), now: t0) == [.sendStreamEnd, .disconnect(.channelBindingUnavailable(.tlsServerEndPoint))])
    }

    @Test func wrongServerSignatureDisconnectsWithoutEstablishing() {
        var m = Machine(configuration: Self.configuration, nonce: Self.nonce)
        _ = m.connectionOpened(now: t0, directTLS: Self.tls)
        _ = m.received(.streamStart(Self.serverHeader), now: t0)
        _ = m.received(element(Self.saslFeatures), now: t0)
        _ = m.received(sasl("challenge", Self.serverFirst), now: t0)
        #expect(m.received(sasl("success", "v=AAAAAAAAAAAAAAAAAAAAAAAAAAA="), now: t0)
            == [.sendStreamEnd, .disconnect(.scram(.serverSignatureMismatch))])
        #expect(m.state == .finished)
        #expect(m.received(.streamStart(Self.serverHeader), now: t0) == [])
        #expect(!m.isConnected)
    }

    @Test func serverFinalAsAChallengeIsVerifiedThenAnEmptySuccessAccepted() {
        var m = Machine(configuration: Self.configuration, nonce: Self.nonce)
        _ = m.connectionOpened(now: t0, directTLS: Self.tls)
        _ = m.received(.streamStart(Self.serverHeader), now: t0)
        _ = m.received(element(Self.saslFeatures), now: t0)
        _ = m.received(sasl("challenge", Self.serverFirst), now: t0)
        #expect(m.received(sasl("challenge", Self.serverFinal), now: t0)
            == [.sendElement(XElement("response", namespace: XMPPNamespace.sasl))])
        let actions = m.received(element("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>"), now: t0)
        guard case .authenticated(let salted?)? = actions.first else {
            Issue.record("no salted password after success: \(actions)")
            return
        }
        #expect(salted.iterations == 4096)
        #expect(Array(actions.dropFirst()) == [.resetParser, .sendStreamHeader(to: "example.com", from: Self.account)])
    }

    @Test func anEmptySuccessWithoutServerFinalIsRefused() {
        var m = Machine(configuration: Self.configuration, nonce: Self.nonce)
        _ = m.connectionOpened(now: t0, directTLS: Self.tls)
        _ = m.received(.streamStart(Self.serverHeader), now: t0)
        _ = m.received(element(Self.saslFeatures), now: t0)
        _ = m.received(sasl("challenge", Self.serverFirst), now: t0)
        #expect(m.received(element("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>"), now: t0)
            == [.sendStreamEnd, .disconnect(.scram(.malformedServerMessage(.missingVerifier)))])
    }

    @Test func saslFailureIsTyped() {
        var m = Machine(configuration: Self.configuration, nonce: Self.nonce)
        _ = m.connectionOpened(now: t0, directTLS: Self.tls)
        _ = m.received(.streamStart(Self.serverHeader), now: t0)
        _ = m.received(element(Self.saslFeatures), now: t0)
        let failure = """
            <failure xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><not-authorized/><text>Wrong password</text></failure>
            """
        #expect(m.received(element(failure), now: t0)
            == [.sendStreamEnd, .disconnect(.authenticationFailed(.notAuthorized, text: "Wrong password"))])
    }

    @Test func serverHeaderMustBeAClientStreamWithAnID() {
        var m = Machine(configuration: Self.configuration, nonce: Self.nonce)
        _ = m.connectionOpened(now: t0)
        var header = Self.serverHeader
        header.contentNamespace = XMPPNamespace.component
        #expect(m.received(.streamStart(header), now: t0) == [
            .sendStreamError(StreamError(condition: .invalidNamespace)), .sendStreamEnd,
            .disconnect(.protocolViolation("stream header is not a jabber:client stream")),
        ])
        var noID = Machine(configuration: Self.configuration, nonce: Self.nonce)
        _ = noID.connectionOpened(now: t0)
        header = Self.serverHeader
        header.attributes["id"] = nil
        #expect(noID.received(.streamStart(header), now: t0).last == .disconnect(.protocolViolation("stream header has no id")))
    }

    // MARK: Resumption

    /// A session that handled 7 of the server's stanzas and had 1 of ours acknowledged; `unacknowledged` still out.
    func persisted(unacknowledged: [Stanza]) -> Machine.Resumption {
        Machine.Resumption(streamManagement: StreamManagement(sessionID: "sm-1", location: nil, inboundHandled: 7,
                                                              outboundAcknowledged: 1, unacknowledged: unacknowledged),
                           jid: Self.jid)
    }

    @Test func resumptionResendsTheUnacknowledgedAndSkipsTheBind() {
        var m = authenticated(resuming: persisted(unacknowledged: [message(2), message(3)]))
        #expect(m.received(element(Self.bindFeatures), now: t0) == [.sendNonza(.resume(previd: "sm-1", h: 7))])
        #expect(m.received(element("<resumed xmlns='urn:xmpp:sm:3' previd='sm-1' h='2'/>"), now: t0)
            == [.acknowledged([message(2)]), .resumed(resend: [message(3)]), .send(message(3)), .established(Self.jid)])
        #expect(m.isConnected)
        #expect(m.streamManagement?.unacknowledged == [message(3)])
        #expect(m.streamManagement?.inboundHandled == 7)
    }

    @Test func failedResumptionReportsTheUnknownAndBinds() {
        var m = authenticated(resuming: persisted(unacknowledged: [message(2), message(3)]))
        _ = m.received(element(Self.bindFeatures), now: t0)
        let failed = "<failed xmlns='urn:xmpp:sm:3'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></failed>"
        #expect(m.received(element(failed), now: t0) == [.resumeFailed(unknown: [message(2), message(3)]), .send(Self.bindRequest)])
        #expect(m.received(bindResult, now: t0) == [.bound(Self.jid), .sendNonza(.enable(resume: true, max: nil))])
        #expect(m.received(element("<enabled xmlns='urn:xmpp:sm:3' id='sm-2' resume='true'/>"), now: t0) == [.established(Self.jid)])
        #expect(m.streamManagement?.sessionID == "sm-2")
        #expect(m.streamManagement?.unacknowledged == [])
        #expect(m.streamManagement?.inboundHandled == 0)
    }

    @Test func resumedWithTooHighACountIsAStreamError() {
        var m = authenticated(resuming: persisted(unacknowledged: [message(2)]))
        _ = m.received(element(Self.bindFeatures), now: t0)
        let actions = m.received(element("<resumed xmlns='urn:xmpp:sm:3' previd='sm-1' h='50000'/>"), now: t0)
        #expect(actions.last == .disconnect(.streamManagement(.handledCountTooHigh(h: 50000, sent: 2))))
        #expect(!m.isConnected)
    }

    /// The store may lag behind the last stanzas sent before a crash: a kept session's `<resumed h>` a little ahead of
    /// what it lists means those went too; nothing is resent.
    @Test func aKeptSessionResumesWhenTheServerCountsAFewMoreThanTheStoreKept() {
        var m = authenticated(resuming: persisted(unacknowledged: [message(2)]))
        _ = m.received(element(Self.bindFeatures), now: t0)
        let actions = m.received(element("<resumed xmlns='urn:xmpp:sm:3' previd='sm-1' h='5'/>"), now: t0)
        #expect(actions.last == .established(Self.jid))
        #expect(m.streamManagement?.outboundAcknowledged == 5 && m.streamManagement?.unacknowledged == [])
    }

    // MARK: Established

    @Test func stanzasAreDeliveredAndTheAckCountsOnlyHandledOnes() {
        var m = established()
        let incoming = "<message xmlns='jabber:client' from='room@conference.example.com/a' type='groupchat' id='x1'><body>hi</body></message>"
        let stanza = try! Stanza(element: TestXML.element(incoming))
        #expect(m.received(element(incoming), now: t0) == [.deliver(stanza)])
        #expect(m.received(element(incoming), now: t0) == [.deliver(stanza)])
        #expect(m.received(element("<r xmlns='urn:xmpp:sm:3'/>"), now: t0) == [.sendNonza(.ack(h: 0))])
        m.handled()
        #expect(m.received(element("<r xmlns='urn:xmpp:sm:3'/>"), now: t0) == [.sendNonza(.ack(h: 1))])
        m.handled()
        #expect(m.received(element("<r xmlns='urn:xmpp:sm:3'/>"), now: t0) == [.sendNonza(.ack(h: 2))])
    }

    /// An ack asked for on demand (the send window is full): once for what was sent, not again until more is sent.
    @Test func anAcknowledgementAskedForOnDemandIsAskedOnce() throws {
        var m = established()
        #expect(m.requestAcknowledgement() == [], "nothing sent: nothing to ask about")
        _ = try m.send(message(1))
        _ = try m.send(message(2))
        #expect(m.requestAcknowledgement() == [.sendNonza(.requestAck)])
        #expect(m.requestAcknowledgement() == [], "asked already for these")
        _ = try m.send(message(3))
        #expect(m.requestAcknowledgement() == [.sendNonza(.requestAck)])
    }

    @Test func sendRecordsAndRequestsAnAckEveryN() throws {
        var m = established()
        for n in 1...4 {
            #expect(try m.send(message(n)) == [.send(message(n))])
        }
        #expect(try m.send(message(5)) == [.send(message(5)), .sendNonza(.requestAck)])
        #expect(try m.send(message(6)) == [.send(message(6))])
        #expect(m.streamManagement?.unacknowledged.count == 6)
        #expect(m.received(element("<a xmlns='urn:xmpp:sm:3' h='2'/>"), now: t0) == [.acknowledged([message(1), message(2)])])
        #expect(m.streamManagement?.unacknowledged == [message(3), message(4), message(5), message(6)])
    }

    @Test func sendBeforeEstablishedThrows() {
        var m = authenticated()
        #expect(throws: ClientError.notConnected) { try m.send(message(1)) }
    }

    @Test func ackTooHighIsAStreamErrorWithHandledCountTooHigh() throws {
        var m = established()
        _ = try m.send(message(1))
        let error = StreamManagementError.handledCountTooHigh(h: 3, sent: 1)
        #expect(m.received(element("<a xmlns='urn:xmpp:sm:3' h='3'/>"), now: t0) == [
            .sendStreamError(StreamError(condition: .undefinedCondition, text: error.description),
                             applicationCondition: XElement("handled-count-too-high", namespace: XMPPNamespace.streamManagement)),
            .sendStreamEnd, .disconnect(.streamManagement(error)),
        ])
        #expect(m.state == .finished)
    }

    @Test func serverPingsAreAnsweredAndCounted() {
        var m = established()
        let ping = "<iq xmlns='jabber:client' type='get' id='p1' from='example.com' to='user@example.com/isthmus'><ping xmlns='urn:xmpp:ping'/></iq>"
        let pong = IQ(type: .result, from: Self.jid, to: JID("example.com"), id: StanzaAttributeID("p1")!)
        #expect(m.received(element(ping), now: t0) == [.handledHere, .send(.iq(pong))])
        #expect(m.streamManagement?.inboundHandled == 0, "counted by the connection, in arrival order")
        m.handled()
        #expect(m.streamManagement?.inboundHandled == 1)
        #expect(m.streamManagement?.unacknowledged == [.iq(pong)])
    }

    /// A room may route to the new resource before `<enabled/>` (Prosody, when the bind replaced a hibernating
    /// session that sat in rooms): the stanza is delivered once established, and not counted, as the server did not.
    @Test func aStanzaBeforeEnabledIsDeliveredAfterwardsAndNotCounted() {
        var m = authenticated()
        _ = m.received(element(Self.bindFeatures), now: t0)
        _ = m.received(bindResult, now: t0)
        let presence = "<presence xmlns='jabber:client' type='unavailable' from='room@conference.example.com/Matrix' to='user@example.com/isthmus'/>"
        let ping = "<iq xmlns='jabber:client' type='get' id='p1' from='example.com' to='user@example.com/isthmus'><ping xmlns='urn:xmpp:ping'/></iq>"
        #expect(m.received(element(presence), now: t0) == [])
        #expect(m.received(element(ping), now: t0) == [])
        #expect(!m.isConnected)
        let pong = IQ(type: .result, from: Self.jid, to: JID("example.com"), id: StanzaAttributeID("p1")!)
        #expect(m.received(element("<enabled xmlns='urn:xmpp:sm:3' id='sm-1' resume='true'/>"), now: t0) == [
            .established(Self.jid), .deliver(try! Stanza(element: TestXML.element(presence))), .handledHere, .send(.iq(pong)),
        ])
        m.handled()
        m.handled()
        #expect(m.streamManagement?.inboundHandled == 0, "the server counted neither")
        let later = "<message xmlns='jabber:client' from='room@conference.example.com/a' type='groupchat' id='x1'><body>hi</body></message>"
        _ = m.received(element(later), now: t0)
        m.handled()
        #expect(m.received(element("<r xmlns='urn:xmpp:sm:3'/>"), now: t0) == [.sendNonza(.ack(h: 1))])
    }

    /// A nonza other than `<enabled/>`/`<failed/>` while enabling is still a protocol violation.
    @Test func anAckBeforeEnabledIsRefused() {
        var m = authenticated()
        _ = m.received(element(Self.bindFeatures), now: t0)
        _ = m.received(bindResult, now: t0)
        #expect(m.received(element("<a xmlns='urn:xmpp:sm:3' h='0'/>"), now: t0).last
            == .disconnect(.protocolViolation("unexpected <a> during negotiation")))
    }

    @Test func closeSendsAnAckThenTheStreamEnd() {
        var m = established()
        m.handled()
        #expect(m.closeRequested(now: t0) == [.sendNonza(.ack(h: 1)), .sendStreamEnd])
        #expect(m.received(.streamEnd, now: t0) == [.disconnect(nil)])
    }

    @Test func aCrashJustDropsTheSocketAndKeepsTheSessionForResumption() {
        var m = established()
        #expect(m.connectionClosed(reason: "reset") == [.disconnect(.connectionLost("reset"))])
        #expect(m.streamManagement?.isResumable == true)
    }

    // MARK: Time

    @Test func silenceSendsAPingToTheServerAndNoAnswerDeclaresTheLinkDead() {
        var m = established()
        #expect(m.tick(now: t0 + .seconds(29)) == [])
        let ping = IQ(type: .get, to: JID("example.com"), id: StanzaAttributeID("keepalive-1")!, payload: .ping)
        #expect(m.tick(now: t0 + .seconds(30)) == [.send(.iq(ping))])
        #expect(m.streamManagement?.unacknowledged == [.iq(ping)])
        #expect(m.tick(now: t0 + .seconds(39)) == [])
        #expect(m.tick(now: t0 + .seconds(40)) == [.disconnect(.timeout(.keepalive))])
    }

    @Test func aPingAnswerIsSwallowedAndCounted() {
        var m = established()
        _ = m.tick(now: t0 + .seconds(30))
        let answer = "<iq xmlns='jabber:client' type='result' id='keepalive-1' from='example.com' to='user@example.com/isthmus'/>"
        #expect(m.received(element(answer), now: t0 + .seconds(31)) == [.handledHere])
        m.handled()
        #expect(m.streamManagement?.inboundHandled == 1)
        #expect(m.tick(now: t0 + .seconds(45)) == [])
        #expect(m.isConnected)
    }

    @Test func negotiationTimesOut() {
        var m = authenticated()
        #expect(m.tick(now: t0 + .seconds(19)) == [])
        #expect(m.tick(now: t0 + .seconds(20)) == [.disconnect(.timeout(.negotiation))])
        #expect(m.state == .finished)
    }

    @Test func establishedIsNotSubjectToTheNegotiationTimeout() {
        var m = established()
        m.bytesReceived(now: t0 + .seconds(25))
        #expect(m.tick(now: t0 + .seconds(25)) == [])
        #expect(m.isConnected)
    }
}
