import IsthmusCommon
import TestSupport
import Testing
import XMLStream
import XMPP

/// The XEP-0114 protocol with literal events and injected time.
@Suite struct ComponentStateMachineTests {
    let t0 = ContinuousClock.now
    static let configuration = ComponentStateMachine.Configuration(
        componentDomain: "bridge.localhost", secret: "s3cret", pingTarget: JID("localhost")!,
        pingInterval: .seconds(30), pingTimeout: .seconds(10), handshakeTimeout: .seconds(5))

    static let serverHeader = StreamHeader(
        name: "stream", namespace: XMPPNamespace.streams, contentNamespace: XMPPNamespace.component,
        attributes: ["id": "abc", "from": "bridge.localhost"])

    func element(_ xml: String) -> XMLStreamEvent { .element(TestXML.element(xml)) }

    /// A machine that has completed the handshake at t0.
    func connected() -> ComponentStateMachine {
        var machine = ComponentStateMachine(configuration: Self.configuration)
        _ = machine.connectionOpened(now: t0)
        _ = machine.received(.streamStart(Self.serverHeader), now: t0)
        _ = machine.received(element("<handshake/>"), now: t0)
        return machine
    }

    @Test func handshakeHashesStreamIDAndSecret() {
        var machine = ComponentStateMachine(configuration: Self.configuration)
        #expect(machine.connectionOpened(now: t0) == [.sendStreamHeader(to: "bridge.localhost")])
        let digest = Digest.hex(Digest.sha1(Array("abcs3cret".utf8)))
        #expect(machine.received(.streamStart(Self.serverHeader), now: t0) == [.sendHandshake(digest: digest)])
        #expect(!machine.isConnected)
        #expect(machine.received(element("<handshake/>"), now: t0) == [.established])
        #expect(machine.isConnected)
    }

    @Test func wrongSecretConflictAndHostUnknownAreTyped() {
        for (condition, expected) in [
            ("not-authorized", ComponentError.notAuthorized), ("conflict", .conflict), ("host-unknown", .hostUnknown(nil)),
        ] {
            var machine = ComponentStateMachine(configuration: Self.configuration)
            _ = machine.connectionOpened(now: t0)
            _ = machine.received(.streamStart(Self.serverHeader), now: t0)
            let actions = machine.received(
                element("<stream:error><\(condition) xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error>"), now: t0)
            #expect(actions == [.disconnect(expected)])
            #expect(machine.state == .finished)
        }
    }

    @Test func invalidFromWhileConnectedIsTyped() {
        var machine = connected()
        let actions = machine.received(element("""
            <stream:error><invalid-from xmlns='urn:ietf:params:xml:ns:xmpp-streams'/>\
            <text xmlns='urn:ietf:params:xml:ns:xmpp-streams'>bad from</text></stream:error>
            """), now: t0)
        #expect(actions == [.disconnect(.invalidFrom("bad from"))])
    }

    @Test func headerWithoutIDOrWrongNamespaceIsAProtocolViolation() {
        var machine = ComponentStateMachine(configuration: Self.configuration)
        _ = machine.connectionOpened(now: t0)
        var header = Self.serverHeader
        header.contentNamespace = XMPPNamespace.client
        let actions = machine.received(.streamStart(header), now: t0)
        #expect(actions.first == .sendStreamError(StreamError(condition: .invalidNamespace)))
        #expect(actions.last == .disconnect(.protocolViolation("stream header is not a jabber:component:accept stream")))
    }

    @Test func handshakeTimesOut() {
        var machine = ComponentStateMachine(configuration: Self.configuration)
        _ = machine.connectionOpened(now: t0)
        #expect(machine.tick(now: t0 + .seconds(4)) == [])
        #expect(machine.tick(now: t0 + .seconds(5)) == [.disconnect(.timeout(.handshake))])
    }

    @Test func stanzasAreDeliveredAndMalformedOnesDropped() {
        var machine = connected()
        let message = Message(type: .groupchat, from: JID("room@conference.localhost/a"), to: JID("x@bridge.localhost"), body: "hi")
        #expect(machine.received(.element(message.element), now: t0) == [.deliver(.message(message))])
        let bad = TestXML.element("<message from='@@'/>")
        guard case .dropMalformed(let dropped, _)? = machine.received(.element(bad), now: t0).first else {
            Issue.record("malformed stanza not dropped")
            return
        }
        #expect(dropped == bad)
    }

    @Test func silenceSendsAPingAndAnAnswerKeepsTheLinkAlive() {
        var machine = connected()
        #expect(machine.tick(now: t0 + .seconds(29)) == [])
        let ping = IQ(type: .get, from: JID("bridge.localhost"), to: JID("localhost"), id: StanzaAttributeID("keepalive-1")!, payload: .ping)
        #expect(machine.tick(now: t0 + .seconds(30)) == [.send(.iq(ping))])
        #expect(machine.tick(now: t0 + .seconds(35)) == [])
        // The answer is swallowed, not delivered.
        #expect(machine.received(.element(ping.result().element), now: t0 + .seconds(36)) == [])
        #expect(machine.tick(now: t0 + .seconds(45)) == [])
        #expect(machine.tick(now: t0 + .seconds(65)) == [])
        #expect(machine.tick(now: t0 + .seconds(66)).count == 1)  // the next ping
        #expect(machine.isConnected)
    }

    @Test func noAnswerWithinThePingTimeoutDeclaresTheLinkDead() {
        var machine = connected()
        _ = machine.tick(now: t0 + .seconds(30))
        #expect(machine.tick(now: t0 + .seconds(39)) == [])
        #expect(machine.tick(now: t0 + .seconds(40)) == [.disconnect(.timeout(.keepalive))])
        #expect(!machine.isConnected)
    }

    @Test func anyBytesAfterThePingCountAsAlive() {
        var machine = connected()
        _ = machine.tick(now: t0 + .seconds(30))
        machine.bytesReceived(now: t0 + .seconds(31))  // e.g. a whitespace keepalive
        #expect(machine.tick(now: t0 + .seconds(40)) == [])
        #expect(machine.isConnected)
    }

    @Test func serverPingsToTheComponentAreAnswered() {
        var machine = connected()
        let ping = IQ(type: .get, from: JID("localhost"), to: JID("bridge.localhost"), id: StanzaAttributeID("sp")!, payload: .ping)
        #expect(machine.received(.element(ping.element), now: t0) == [.send(.iq(ping.result()))])
        // Pings to a puppet are the bridge's business.
        var toPuppet = ping
        toPuppet.to = JID("alice@bridge.localhost/r")
        #expect(machine.received(.element(toPuppet.element), now: t0) == [.deliver(.iq(toPuppet))])
    }

    @Test func outgoingFromMustBeInTheComponentDomain() throws {
        let machine = connected()
        try machine.validateOutgoing(.message(Message(from: JID("alice@bridge.localhost/r"), to: JID("room@conference.localhost"))))
        try machine.validateOutgoing(.message(Message(from: JID("bridge.localhost"), to: JID("room@conference.localhost"))))
        for from in [JID("alice@localhost/r"), JID("bridge.localhost.evil.org"), JID("x@sub.bridge.localhost"), nil] {
            #expect(throws: ComponentError.fromOutsideComponentDomain(from)) {
                try machine.validateOutgoing(.message(Message(from: from, to: JID("room@conference.localhost"))))
            }
        }
        let notYet = ComponentStateMachine(configuration: Self.configuration)
        #expect(throws: ComponentError.notConnected) {
            try notYet.validateOutgoing(.message(Message(from: JID("a@bridge.localhost"), to: JID("b@c"))))
        }
    }

    @Test func gracefulCloseWaitsForTheServersStreamEnd() {
        var machine = connected()
        #expect(machine.closeRequested(now: t0) == [.sendStreamEnd])
        #expect(machine.received(.streamEnd, now: t0) == [.disconnect(nil)])
        var slow = connected()
        _ = slow.closeRequested(now: t0)
        #expect(slow.tick(now: t0 + .seconds(1)) == [])
        #expect(slow.tick(now: t0 + .seconds(2)) == [.disconnect(nil)])
    }

    @Test func serverClosingOrDroppingIsReported() {
        var ended = connected()
        #expect(ended.received(.streamEnd, now: t0) == [.sendStreamEnd, .disconnect(.closedByServer)])
        var dropped = connected()
        #expect(dropped.connectionClosed(reason: "reset") == [.disconnect(.connectionLost("reset"))])
        #expect(dropped.connectionClosed(reason: nil) == [])
    }

    @Test func parserRefusalSendsAStreamError() {
        var machine = connected()
        let refusal = XMLStreamError(.comment, message: "comments are not allowed in XMPP")
        let actions = machine.parseFailed(refusal)
        #expect(actions.first == .sendStreamError(StreamError(condition: .restrictedXML, text: "comments are not allowed in XMPP")))
        #expect(actions.dropFirst() == [.sendStreamEnd, .disconnect(.protocolViolation(refusal.description))])
    }
}
