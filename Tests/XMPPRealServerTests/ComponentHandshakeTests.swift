import IsthmusCommon
import Network
import TestSupport
import XCTest
import XMPPComponent

/// XEP-0114 against the bed's real XMPP server: handshake, typed errors, doctor, recovery after a restart.
final class ComponentHandshakeTests: XCTestCase {
    func testHandshakeSucceedsAndTheServerAnswersPings() async throws {
        let bed = try TestBed.fromEnvironment()
        let component = try await RealComponent.connected(bed, in: self)
        let isConnected = await component.connection.isConnected
        XCTAssertTrue(isConnected)
        let pong = try await component.connection.sendIQ(
            IQ(type: .get, from: JID(bed.componentDomain), to: JID(bed.xmppDomain), payload: .ping))
        XCTAssertEqual(pong.type, .result)
        XCTAssertEqual(pong.from, JID(bed.xmppDomain))
        await component.close()
    }

    func testWrongSecretIsNotAuthorized() async throws {
        let bed = try TestBed.fromEnvironment()
        let component = RealComponent(bed, secret: "not-the-secret", in: self)
        let event = try await component.nextEvent()
        XCTAssertEqual(event, .disconnected(.notAuthorized))
        await component.runner.stop()
    }

    func testSecondConnectionForTheSameDomainConflictsOrIsShared() async throws {
        let bed = try TestBed.fromEnvironment()
        let first = try await RealComponent.connected(bed, in: self)
        let second = RealComponent(bed, in: self)
        let event = try await second.nextEvent()
        let ping = IQ(type: .get, from: JID(bed.componentDomain), to: JID(bed.xmppDomain), payload: .ping)
        switch bed.xmppServer {
        case .prosody:
            XCTAssertEqual(event, .disconnected(.conflict))
            await second.runner.stop()
            // Prosody's default (kick_new) keeps the first connection: it still answers a ping (its isConnected flag
            // alone could lag a kick the actor has not read yet).
            let pong = try await first.connection.sendIQ(ping)
            XCTAssertEqual(pong.type, .result, "Prosody's default (kick_new) keeps the first connection")
        case .ejabberd:
            // ejabberd 23.01 accepts every connection for the domain and spreads the stanzas for it over them at
            // random (ejabberd_router:balancing_route), so there is no conflict to see, and while both are up a reply
            // may go to either. docs/deploy.md warns never to run two bridges (or doctor beside one) on ejabberd.
            XCTAssertEqual(event, .connected(reconnected: false))
            await second.runner.stop()
            // Once ejabberd has dropped the second route, the first alone gets everything again.
            try await eventually("the first connection answers pings again", timeout: 15) {
                (try? await first.connection.sendIQ(ping, timeout: .seconds(1)))?.type == .result
            }
        }
        await first.close()
    }

    func testFromOutsideTheComponentDomainIsRefusedAndTheLinkSurvives() async throws {
        let bed = try TestBed.fromEnvironment()
        let component = try await RealComponent.connected(bed, in: self)
        let outside = JID("alice@\(bed.xmppDomain)/spoof")
        do {
            try await component.connection.send(.message(Message(from: outside, to: JID("bob@\(bed.xmppDomain)"), body: "x")))
            XCTFail("a stanza from outside the component domain was sent")
        } catch {
            XCTAssertEqual(error, .fromOutsideComponentDomain(outside))
        }
        let pong = try await component.connection.sendIQ(
            IQ(type: .get, from: JID(bed.componentDomain), to: JID(bed.xmppDomain), payload: .ping))
        XCTAssertEqual(pong.type, .result, "the link should still be up")
        await component.close()
    }

    func testDoctorSaysWhatWorksAndWhatDoesNot() async throws {
        let bed = try TestBed.fromEnvironment()
        let good = await XMPPDoctor.check(configuration: RealComponent.configuration(bed), logger: .disabled)
        XCTAssertEqual(good.map(\.ok), [true, true, true], "\(good)")

        let wrong = await XMPPDoctor.check(configuration: RealComponent.configuration(bed, secret: "wrong"), logger: .disabled)
        XCTAssertEqual(wrong.map(\.ok), [true, false])
        XCTAssertTrue(wrong.last?.detail.contains("rejected the component secret") == true, "\(wrong)")

        let reserved = try ReservedPort()
        let unusedPort = reserved.port
        let nobody = await XMPPDoctor.check(configuration: RealComponent.configuration(bed, port: unusedPort), logger: .disabled)
        XCTAssertEqual(nobody, [DoctorFinding(
            ok: false, check: XMPPDoctor.Check.reachable,
            detail: "nothing is listening on 127.0.0.1:\(unusedPort) (connection refused)")])
    }

    func testConnectionRecoversAfterProsodyRestartAndRoomsCanBeRejoined() async throws {
        let bed = try TestBed.fromEnvironment()
        let component = try await RealComponent.connected(bed, in: self)
        let room = bed.uniqueRoom("restart")
        let alice = bed.puppet("alice_matrix")
        try await component.join(room, nick: "Alice", as: alice)

        try await onOwnThread { try bed.restart(.xmpp) }

        let dropped = try await component.events.next(within: 20, "the disconnect") { event in
            if case .disconnected = event { true } else { false }
        }
        guard case .disconnected = dropped else { return XCTFail("no disconnect: \(dropped)") }
        let back = try await component.events.next(within: 20, "the reconnect") { event in
            if case .connected = event { true } else { false }
        }
        XCTAssertEqual(back, .connected(reconnected: true))

        // The room is persistent; our occupant is gone and must rejoin.
        let rejoined = try await component.join(room, nick: "Alice", as: alice)
        XCTAssertFalse(rejoined.createdRoom)
        let carol = try await bed.client("carol")
        try await carol.joinRoom(room, nick: "Carol")
        let sent = try await component.connection.sendGroupchat(from: alice, room: room, body: "after the restart")
        let seen = try await carol.nextMessage { $0.originID == sent.originID }
        XCTAssertEqual(seen.body, "after the restart")
        XCTAssertNotNil(seen.stanzaID(by: room), "the room's stanza-id is missing")
        carol.close()
        await component.close()
    }
}
