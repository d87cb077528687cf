import IsthmusCommon
import TestSupport
import Testing
import XMPPComponent

/// The component actor against a scriptable fake server on loopback (tier 2).
@Suite struct ComponentConnectionTests {
    @Test func handshakeThenStanzasFlowInOrderAndCloseIsGraceful() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.server.nextSession()
        let header = try await session.receiveHeader()
        #expect(header.to == "bridge.localhost" && header.contentNamespace == "jabber:component:accept")
        try session.sendComponentHeader(id: "stream-42")
        let handshake = try await session.receiveElement()
        #expect(handshake.text == Digest.hex(Digest.sha1(Array("stream-42\(ComponentFixture.secret)".utf8))))
        try session.send("<handshake/>")
        #expect(try await fixture.nextEvent() == .connected(reconnected: false))
        #expect(await fixture.connection.isConnected)

        for index in 0..<3 {
            try session.send("<message from='room@conference.localhost/a' to='x@bridge.localhost' type='groupchat'><body>in \(index)</body></message>")
        }
        for index in 0..<3 {
            guard case .message(let message) = try await fixture.nextStanza() else { throw TestFailure("not a message") }
            #expect(message.body == "in \(index)")
        }
        for index in 0..<3 {
            try await fixture.connection.send(.message(Message(
                type: .groupchat, from: JID("x@bridge.localhost/r"), to: JID("room@conference.localhost"), body: "out \(index)")))
        }
        for index in 0..<3 {
            #expect(try await session.receiveElement().child("body", namespace: XMPPNamespace.component)?.text == "out \(index)")
        }

        async let closing: Void = fixture.connection.close()
        #expect(try await session.receive() == .streamEnd)
        // A courtesy: the connection waits 2 s for it, then closes, so on a starved machine the socket may be gone.
        try? session.send("</stream:stream>")
        await closing
        await fixture.runner.finished()
        #expect(await !fixture.connection.isConnected)
        fixture.server.close()
    }

    @Test func closeBeforeRunStopsAtOnceAndFinishesTheEvents() async throws {
        let connection = ComponentConnection(configuration: ComponentFixture.configuration(port: 1), logger: .disabled)
        await connection.close()
        await connection.run()
        var events = 0
        for await _ in connection.events { events += 1 }
        #expect(events == 0)
    }

    @Test func wrongSecretIsNotAuthorizedAndTheConnectionRetries() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.server.nextSession()
        _ = try await session.receiveHeader()
        try session.sendComponentHeader()
        _ = try await session.receiveElement()
        try session.send("<stream:error><not-authorized xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error></stream:stream>")
        #expect(try await fixture.nextEvent() == .disconnected(.notAuthorized))
        // It keeps trying (with backoff); a later attempt succeeds and is not a "reconnect" (never connected before).
        _ = try await fixture.acceptNext(reconnected: false)
        await fixture.stop()
    }

    @Test func conflictAndHostUnknownAreTyped() async throws {
        let fixture = try ComponentFixture()
        for (condition, expected) in [("conflict", ComponentError.conflict), ("host-unknown", .hostUnknown(nil))] {
            let session = try await fixture.server.nextSession()
            _ = try await session.receiveHeader()
            try session.send("<stream:stream xmlns='jabber:component:accept' xmlns:stream='http://etherx.jabber.org/streams' id='x'>"
                + "<stream:error><\(condition) xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error></stream:stream>")
            #expect(try await fixture.nextEvent() == .disconnected(expected))
        }
        await fixture.stop()
    }

    @Test func deadLinkIsDetectedByKeepaliveAndTheConnectionComesBack() async throws {
        // The answer to the first ping must arrive within the timeout even on a loaded machine: a clean-clone CI run
        // starved every test for 16 s at its start, and a 1 s timeout dropped the answered link (seen once).
        let fixture = try ComponentFixture(pingInterval: .milliseconds(150), pingTimeout: .seconds(10))
        let session = try await fixture.acceptNext()
        // First ping: answered, so the link stays up.
        let ping = try IQ(element: try await session.receiveElement())
        #expect(ping.payload == .ping && ping.to == JID("localhost") && ping.from == JID("bridge.localhost"))
        try session.send(ping.result().element)
        // Second ping: the server has gone silent.
        let second = try IQ(element: try await session.receiveElement())
        #expect(second.payload == .ping && second.id != ping.id)
        #expect(try await fixture.nextEvent(within: 30) == .disconnected(.timeout(.keepalive)))
        _ = try await fixture.acceptNext(reconnected: true)
        await fixture.stop()
    }

    @Test func pausedReadingHoldsStanzasAndTheKeepaliveUntilResumed() async throws {
        // A keepalive that would drop a silent link within 1.2 s: a pause of 2 s must not count as silence.
        let fixture = try ComponentFixture(pingInterval: .milliseconds(200), pingTimeout: .seconds(1))
        let session = try await fixture.acceptNext()
        // Until the pause the server answers the pings, so however long a loaded machine takes to get there, the link
        // is up when it starts (unanswered, a 0.4 s keepalive once dropped it first in CI).
        let responder = Task {
            while !Task.isCancelled {
                let ping = try IQ(element: try await session.receiveElement())
                try session.send(ping.result().element)
            }
        }
        await fixture.connection.pauseReading()
        responder.cancel()
        try session.send("<message from='room@conference.localhost/a' to='x@bridge.localhost' type='groupchat'><body>held</body></message>")
        await #expect(throws: (any Error).self, "an event came through a paused connection") {
            try await fixture.nextEvent(within: 2)
        }
        await fixture.connection.resumeReading()
        guard case .stanza(.message(let message)) = try await fixture.nextEvent() else { throw TestFailure("not the held message") }
        #expect(message.body == "held")
        await fixture.stop()
    }

    @Test func serverClosingTheStreamIsReportedAndReconnected() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.acceptNext()
        try session.send("</stream:stream>")
        #expect(try await fixture.nextEvent() == .disconnected(.closedByServer))
        let next = try await fixture.acceptNext(reconnected: true)
        next.connection.abort()
        guard case .disconnected(let error) = try await fixture.nextEvent() else { throw TestFailure("no disconnect") }
        #expect(error == .closedByServer || error == .connectionLost("connection reset by peer"))
        await fixture.stop()
    }

    @Test func hostileXMLFromTheServerGetsAStreamError() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.acceptNext()
        try session.send("<message><!-- sneaky --></message>")
        let error = try StreamError(element: try await session.receiveElement())
        #expect(error.condition == .restrictedXML)
        #expect(try await session.receive() == .streamEnd)
        guard case .disconnected(.protocolViolation) = try await fixture.nextEvent() else { throw TestFailure("no protocol violation") }
        await fixture.stop()
    }

    @Test func nothingListeningIsConnectionRefused() async throws {
        let reserved = try ReservedPort()
        let connection = ComponentConnection(configuration: ComponentFixture.configuration(port: reserved.port), logger: .disabled)
        let events = AsyncQueue.collecting(connection.events)
        let runner = BackgroundTask { await connection.run() }
        #expect(try await events.next(within: 5, "a component event") == .disconnected(.connectionRefused(host: "127.0.0.1", port: reserved.port)))
        // It keeps trying, and is refused again.
        #expect(try await events.next(within: 5, "a component event") == .disconnected(.connectionRefused(host: "127.0.0.1", port: reserved.port)))
        await runner.stop()
    }

    @Test func sendingWhileDisconnectedOrFromOutsideTheDomainThrows() async throws {
        let fixture = try ComponentFixture()
        let early = Message(from: JID("a@bridge.localhost"), to: JID("room@conference.localhost"), body: "early")
        await #expect(throws: ComponentError.notConnected) { try await fixture.connection.send(.message(early)) }
        await #expect(throws: ComponentError.notConnected) {
            _ = try await fixture.connection.sendIQ(IQ(type: .get, from: JID("bridge.localhost"), to: JID("localhost"), payload: .ping))
        }
        let session = try await fixture.acceptNext()
        for from in [JID("alice@localhost/x"), JID("bridge.localhost.evil"), nil] {
            let bad = Message(from: from, to: JID("room@conference.localhost"), body: "bad")
            await #expect(throws: ComponentError.fromOutsideComponentDomain(from)) { try await fixture.connection.send(.message(bad)) }
        }
        try await fixture.connection.send(.message(Message(from: JID("a@bridge.localhost"), to: JID("room@conference.localhost"), body: "good")))
        // Nothing of the refused stanzas reached the wire: the next thing the server sees is the good one.
        #expect(try Message(element: try await session.receiveElement()).body == "good")
        #expect(await fixture.connection.isConnected)
        await fixture.stop()
    }

    @Test func iqResponsesAreMatchedByIDAndResponder() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.acceptNext()
        let room = JID("room@conference.localhost")!
        async let answer = fixture.connection.sendIQ(
            IQ(type: .get, from: JID("bridge.localhost"), to: room, payload: .discoInfo(DiscoInfo())))
        let request = try IQ(element: try await session.receiveElement())
        // A response with the right id from someone else is not the answer: it goes to the bridge.
        var spoofed = request.result(payload: nil)
        spoofed.from = JID("evil@example.org")
        try session.send(spoofed.element)
        try session.send(request.result(payload: .discoInfo(DiscoInfo(features: [XMPPNamespace.mam]))).element)
        let response = try await answer
        #expect(response.payload == .discoInfo(DiscoInfo(features: [XMPPNamespace.mam])))
        #expect(try await fixture.nextStanza() == .iq(spoofed))
        await fixture.stop()
    }

    @Test func unansweredIQTimesOut() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.acceptNext()
        let ping = IQ(type: .get, from: JID("bridge.localhost"), to: JID("localhost"), payload: .ping)
        await #expect(throws: XMPPRequestError.timeout("iq \(ping.id) to localhost")) {
            _ = try await fixture.connection.sendIQ(ping, timeout: .milliseconds(100))
        }
        #expect(try await session.receiveElement().name == "iq")
        await fixture.stop()
    }

    @Test func pendingRequestsFailWhenTheLinkDrops() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.acceptNext()
        async let answer = fixture.connection.sendIQ(IQ(type: .get, from: JID("bridge.localhost"), to: JID("localhost"), payload: .ping))
        _ = try await session.receiveElement()
        session.connection.abort()
        let result: Result<IQ, any Error>
        do { result = .success(try await answer) } catch { result = .failure(error) }
        #expect(throws: ComponentError.self) { try result.get() }
        await fixture.stop()
    }
}
