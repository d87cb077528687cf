import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPPClient

/// The bridge's own account against the bed's real XMPP server over c2s: SCRAM login, bind, XEP-0198, and a
/// session taken up again after the process "crashed" (the task stopped without closing the stream).
final class ClientConnectionRealServerTests: XCTestCase {
    /// A connection as `carol` with its own resource, acks asked for only after `ackEvery` stanzas.
    func connection(_ bed: TestBed, resource: String, ackEvery: Int = 100, sendWindow: Int = 128,
                    resuming: ClientStateMachine.Resumption? = nil) -> (ClientConnection, AsyncQueue<ClientEvent>, BackgroundTask) {
        let client = RealClient(bed, in: self, stream: RealClient.stream(bed, resource: resource, ackEvery: ackEvery), resuming: resuming,
                                sendWindow: sendWindow)
        return (client.connection, client.events, client.runner)
    }

    /// The next event that is not a report of authentication (SCRAM's salted password comes first on every login).
    func next(_ events: AsyncQueue<ClientEvent>, _ what: String) async throws -> ClientEvent {
        try await RealClient.next(events, what)
    }

    func ping(_ bed: TestBed, id: String) -> Stanza {
        RealClient.ping(bed.xmppDomain, id: id)
    }

    func testLogsInWithSCRAMBindsAndHasStanzasAcknowledged() async throws {
        let bed = try TestBed.fromEnvironment()
        let resource = "relay-\(UUID().uuidString.prefix(8))"
        let (connection, events, _) = connection(bed, resource: resource, ackEvery: 1)
        let first = try await events.next(within: 10, "the SCRAM login")
        guard case .authenticated(let salted) = first else { return XCTFail("expected the salted password first, got \(first)") }
        XCTAssertGreaterThanOrEqual(salted.iterations, 4096)
        let connected = try await next(events, "connected")
        XCTAssertEqual(connected, .connected(JID("carol@\(bed.xmppDomain)/\(resource)")!, resumed: false))

        let ping = ping(bed, id: "ping-1")
        try await connection.send(ping)
        var answered = false, acknowledged = false
        while !(answered && acknowledged) {
            switch try await next(events, "the pong and the ack") {
            case .stanza(.iq(let iq), _) where iq.id == StanzaAttributeID("ping-1"):
                XCTAssertEqual(iq.type, .result)
                await connection.handled()
                answered = true
            case .acknowledged(let stanzas):
                XCTAssertEqual(stanzas, [ping], "the server confirms exactly the stanza we sent")
                acknowledged = true
            case let other:
                XCTFail("unexpected \(other)")
            }
        }
    }

    func testACrashedSessionIsResumedAndWhatWasNotHandledComesAgain() async throws {
        let bed = try TestBed.fromEnvironment()
        let resource = "relay-\(UUID().uuidString.prefix(8))"
        let (first, firstEvents, firstRunner) = connection(bed, resource: resource)
        guard case .connected(let jid, resumed: false) = try await next(firstEvents, "the first login") else {
            return XCTFail("the first connection did not connect")
        }
        let beforeCrash = ping(bed, id: "before-crash")
        try await first.send(beforeCrash)
        let pong = try await next(firstEvents, "the pong")
        guard case .stanza(.iq(let answer), _) = pong, answer.id == StanzaAttributeID("before-crash") else { return XCTFail("got \(pong)") }
        // Not handled: the effect of the pong is "not durable" when the process dies.
        await firstRunner.stop()   // cancelled: the socket drops, the stream is never closed
        let kept = await first.resumption
        let session = try XCTUnwrap(kept, "a resumable session is kept")
        XCTAssertEqual(session.streamManagement.inboundHandled, 0)

        let (second, secondEvents, _) = connection(bed, resource: "ignored-when-resuming", resuming: session)
        let confirmed = try await next(secondEvents, "the server's count in <resumed h>")
        XCTAssertEqual(confirmed, .acknowledged([beforeCrash]), "the server handled our ping before the crash: not resent")
        let resent = try await next(secondEvents, "the resumption's resend count")
        XCTAssertEqual(resent, .resumed(resent: 0))
        let resumed = try await next(secondEvents, "the resumption")
        XCTAssertEqual(resumed, .connected(jid, resumed: true), "the same session, no new bind")
        let again = try await next(secondEvents, "the unhandled pong, resent by the server")
        guard case .stanza(.iq(let resent), _) = again else { return XCTFail("expected the pong again, got \(again)") }
        XCTAssertEqual(resent.id, StanzaAttributeID("before-crash"))
        await second.handled()

        try await second.send(ping(bed, id: "after-resume"))
        let next = try await next(secondEvents, "the pong after resuming")
        guard case .stanza(.iq(let later), _) = next else { return XCTFail("got \(next)") }
        XCTAssertEqual(later.id, StanzaAttributeID("after-resume"))
    }

    func testAClosedSessionCannotBeResumedAndANewOneStarts() async throws {
        let bed = try TestBed.fromEnvironment()
        let (first, firstEvents, firstRunner) = connection(bed, resource: "relay-\(UUID().uuidString.prefix(8))")
        _ = try await next(firstEvents, "the first login")
        let kept = await first.resumption
        let session = try XCTUnwrap(kept)
        await first.close()   // </stream:stream>: the server ends the session
        await firstRunner.stop()

        let (_, events, _) = connection(bed, resource: "relay-\(UUID().uuidString.prefix(8))", resuming: session)
        let failed = try await next(events, "the refused resumption")
        XCTAssertEqual(failed, .resumeFailed(unknown: []))
        let connected = try await next(events, "a new session")
        guard case .connected(let jid, resumed: false) = connected else { return XCTFail("got \(connected)") }
        XCTAssertEqual(jid.bare, JID("carol@\(bed.xmppDomain)"))
    }

    /// A kept session the server no longer knows, under the resource of an earlier session that still hibernates in
    /// a room with traffic queued for it (the bridge after kill -9, its kept id lost): the new bind replaces the old
    /// session. On a loaded machine the room's presence for the replaced occupant can reach the new resource before
    /// `<enabled/>` (seen in CI; the machine's `aStanzaBeforeEnabledIsDeliveredAfterwardsAndNotCounted` pins that
    /// order down). Either way the connection comes up once and stays up, on a session of its own.
    func testARefusedResumptionUnderAHibernatingSessionsResourceConnectsOnce() async throws {
        let bed = try TestBed.fromEnvironment()
        let resource = "relay-\(UUID().uuidString.prefix(8))"
        let (first, firstEvents, firstRunner) = connection(bed, resource: resource)
        guard case .connected = try await next(firstEvents, "the first login") else { return XCTFail("did not connect") }
        let room = JID("relay-\(UUID().uuidString.prefix(8).lowercased())@\(bed.mucDomain)")!
        guard case .joined = try await first.join(room: room, nick: "Relay", occupant: first.accountJID) else {
            return XCTFail("the join was refused")
        }
        await firstRunner.stop()   // a crash: the session hibernates, still in the room
        // Meanwhile someone joins and speaks: the server queues that for the hibernating session, and re-routes it
        // to the account when the new bind replaces that session.
        let (other, otherEvents, _) = connection(bed, resource: "other-\(UUID().uuidString.prefix(8))")
        guard case .connected = try await next(otherEvents, "another login") else { return XCTFail("did not connect") }
        guard case .joined = try await other.join(room: room, nick: "Other", occupant: other.accountJID) else {
            return XCTFail("the second join was refused")
        }
        _ = try await other.sendGroupchat(from: other.accountJID, room: room, body: "while you were out")
        while true {   // its reflection: the room has routed it to every occupant
            let event = try await next(otherEvents, "the reflection")
            await other.handled()
            if case .stanza(.message(let message), _) = event, message.body == "while you were out" { break }
        }
        let kept = await first.resumption
        let old = try XCTUnwrap(kept)
        let unknown = StreamManagement<Stanza>(sessionID: "gone-\(old.streamManagement.sessionID ?? "")", location: nil,
                                               inboundHandled: old.streamManagement.inboundHandled,
                                               outboundAcknowledged: old.streamManagement.outboundAcknowledged, unacknowledged: [])
        let (second, events, _) = connection(bed, resource: resource, resuming: .init(streamManagement: unknown, jid: old.jid))
        let refused = try await next(events, "the refused resumption")
        XCTAssertEqual(refused, .resumeFailed(unknown: []))
        guard case .connected(let jid, resumed: false) = try await next(events, "a new session") else {
            return XCTFail("did not connect after the refusal")
        }
        XCTAssertEqual(jid, old.jid, "the same resource, bound anew")
        let now = await second.resumption
        XCTAssertNotEqual(now?.streamManagement.sessionID, unknown.sessionID, "the refused id is forgotten")
        // A barrier: our ping's answer comes after whatever the room sent on the bind, on the same link.
        try await second.send(ping(bed, id: "barrier"))
        while true {
            let event = try await next(events, "the barrier's answer")
            await second.handled()
            if case .stanza(.iq(let pong), _) = event, pong.id == StanzaAttributeID("barrier") { break }
            if case .stanza = event { continue }
            return XCTFail("the link changed before the barrier: \(event)")
        }
    }

    /// The requests the bridge makes of a room work over the account's session as over the component: a join that
    /// creates the room (and configures it), a groupchat message and its reflection, a self-ping, the archive.
    func testJoinsARoomSendsAndReadsItBackFromTheArchive() async throws {
        let bed = try TestBed.fromEnvironment()
        let (connection, events, _) = connection(bed, resource: "relay-\(UUID().uuidString.prefix(8))", ackEvery: 1)
        guard case .connected = try await next(events, "connected") else { return XCTFail("did not connect") }
        let room = JID("relay-\(UUID().uuidString.prefix(8).lowercased())@\(bed.mucDomain)")!
        let me = connection.accountJID
        guard case .joined(let selfPresence) = try await connection.join(room: room, nick: "Relay", occupant: me) else {
            return XCTFail("the join was refused")
        }
        XCTAssertTrue(selfPresence.createdRoom, "a fresh room is created by the join")
        let originID = OriginID("relay-\(UUID().uuidString)")!
        try await connection.sendGroupchat(from: me, room: room, body: "hello from the relay", originID: originID)
        var reflected = false
        while !reflected {
            guard case .stanza(let stanza, _) = try await next(events, "the reflection") else { continue }
            await connection.handled()
            if case .message(let message) = stanza, message.originID == originID {
                XCTAssertEqual(message.from, room.with(resource: "Relay"))
                XCTAssertEqual(message.to, me, "addressed to the account's JID the bridge knows")
                reflected = true
            }
        }
        let ping = try await connection.selfPing(room: room, nick: "Relay", occupant: me)
        XCTAssertEqual(ping, .joined)
        let archived = try await connection.mamQuery(room: room, as: me)
        XCTAssertEqual(archived.map(\.message.originID), [originID], "the archive holds the message once")
        XCTAssertEqual(archived.first?.message.body, "hello from the relay")
    }

    /// Messages wait for the send window: with at most 2 unacknowledged (and acks asked for only every 100 stanzas
    /// otherwise), a burst of 8 goes out paced by the server's acknowledgements — the window asks for them — and every
    /// one arrives.
    func testABurstIsPacedByTheServersAcknowledgements() async throws {
        let bed = try TestBed.fromEnvironment()
        let (connection, events, _) = connection(bed, resource: "relay-\(UUID().uuidString.prefix(8))", sendWindow: 2)
        guard case .connected = try await next(events, "connected") else { return XCTFail("did not connect") }
        let room = JID("paced-\(UUID().uuidString.prefix(8).lowercased())@\(bed.mucDomain)")!
        let me = connection.accountJID
        guard case .joined = try await connection.join(room: room, nick: "Relay", occupant: me) else { return XCTFail("refused") }
        var sent: [OriginID] = []
        for index in 0..<8 {
            await connection.awaitSendCapacity()
            let unacknowledged = await connection.unacknowledgedCount
            XCTAssertLessThan(unacknowledged, 2, "message \(index) waited for the window")
            let originID = OriginID("paced-\(index)-\(UUID().uuidString.prefix(8))")!
            try await connection.sendGroupchat(from: me, room: room, body: "paced \(index)", originID: originID)
            sent.append(originID)
        }
        var reflected: [OriginID] = []
        while reflected.count < sent.count {
            guard case .stanza(let stanza, _) = try await next(events, "the reflections") else { continue }
            await connection.handled()
            if case .message(let message) = stanza, let id = message.originID, sent.contains(id) { reflected.append(id) }
        }
        XCTAssertEqual(reflected, sent, "every message once, in order")
    }

    /// Records what the connection keeps, as the store would.
    final class RecordingKeeper: ClientSessionKeeper, @unchecked Sendable {
        private let lock = NSLock()
        private var values: [ClientStateMachine.Resumption?] = []
        func keep(_ resumption: ClientStateMachine.Resumption?) async throws {
            lock.withLock { values.append(resumption) }
        }
        var kept: [ClientStateMachine.Resumption?] { lock.withLock { values } }
        func load() async throws -> ClientStateMachine.Resumption? { nil }
    }

    /// The session a keeper holds is enough for another connection (a restarted process) to resume it, with what
    /// it handled counted; a graceful close leaves nothing to resume.
    func testTheKeptSessionIsWhatARestartResumes() async throws {
        let bed = try TestBed.fromEnvironment()
        let keeper = RecordingKeeper()
        let stream = ClientStateMachine.Configuration(
            domain: bed.xmppDomain, username: "carol", credential: .password(bed.password), resource: "relay-\(UUID().uuidString.prefix(8))",
            allowPlaintext: true, ackEvery: 1, handshakeTimeout: .seconds(10))
        let configuration = ClientConfiguration(host: bed.host, port: bed.c2sPort, stream: stream, connectTimeout: .seconds(5),
                                                reconnectInitialDelay: .milliseconds(100), tickInterval: .milliseconds(50))
        let first = ClientConnection(configuration: configuration, keeper: keeper, logger: RealComponent.logger)
        let firstEvents = AsyncQueue.collecting(first.events)
        let firstRunner = BackgroundTask { await first.run() }
        guard case .connected(let jid, resumed: false) = try await next(firstEvents, "the first login") else { return XCTFail("no login") }
        for id in ["p1", "p2"] {
            try await first.send(ping(bed, id: id))
            while true {
                if case .stanza(.iq(let pong), _) = try await next(firstEvents, "pong \(id)"), pong.id == StanzaAttributeID(id) { break }
            }
            await first.handled()
        }
        try await eventually("the keeper holds both pongs handled", timeout: 10) {
            keeper.kept.last??.streamManagement.inboundHandled == 2
        }
        await firstRunner.stop()   // a crash: the stream is not closed
        let kept = try XCTUnwrap(keeper.kept.last ?? nil)

        let keeper2 = RecordingKeeper()
        let second = ClientConnection(configuration: configuration, resuming: kept, keeper: keeper2, logger: RealComponent.logger)
        let secondEvents = AsyncQueue.collecting(second.events)
        let secondRunner = BackgroundTask { await second.run() }
        var resumed = false
        while !resumed {
            switch try await next(secondEvents, "the resumption") {
            case .connected(let again, resumed: true): XCTAssertEqual(again, jid); resumed = true
            case .acknowledged, .resumed: continue
            case let other: return XCTFail("expected the kept session to resume, got \(other)")
            }
        }
        await second.close()
        await secondRunner.stop()
        XCTAssertEqual(keeper2.kept.last.map { $0 == nil }, true, "a closed session is forgotten: \(keeper2.kept)")
    }
}
