import Foundation
import IsthmusCommon
import Matrix
import MatrixClient
import TestSupport
import XCTest

/// The client API against the test bed's real Synapse, acting as ghosts.
final class MatrixClientSynapseTests: SynapseListenerTestCase {
    func testGhostsRegisterJoinGetARoomNameAndSendIdempotently() async throws {
        let client = harness.client
        let ghost = harness.namespace.userID(for: "Alice.Smith@XMPP.example/Phone " + UUID().uuidString.prefix(8))
        let value1 = try await client.registerGhost(ghost)
        XCTAssertEqual(value1, .registered(ghost))
        let value2 = try await client.registerGhost(ghost)
        XCTAssertEqual(value2, .alreadyRegistered(ghost))
        let value3 = try await client.whoAmI(as: ghost)
        XCTAssertEqual(value3, ghost)

        let (alice, aliceID) = try await harness.userClient("alice")
        let aliasName = "isthmus-test-" + UUID().uuidString.prefix(8).lowercased()
        let room = try await harness.roomWithBot(alice, aliasName: aliasName)
        let alias = RoomAlias("#\(aliasName):localhost")!
        let value4 = try await client.resolveAlias(alias).roomID
        XCTAssertEqual(value4, room)
        let value5 = try await client.join(alias: alias, as: ghost)
        XCTAssertEqual(value5, room)

        try await client.setDisplayName("Alice (XMPP)", of: ghost)
        _ = try await client.setRoomDisplayName("Alice in this room", in: room, for: ghost)
        let members = try await client.joinedMembers(of: room, as: ghost)
        XCTAssertEqual(members[ghost]?.displayName, "Alice in this room")
        XCTAssertNotNil(members[aliceID])

        let txn = ClientTransactionID.derived(fromSourceKey: "\(room)|stanza-\(UUID().uuidString)")
        let first = try await client.sendMessage(.text("from a ghost"), to: room, transactionID: txn, as: ghost)
        let again = try await client.sendMessage(.text("from a ghost"), to: room, transactionID: txn, as: ghost)
        XCTAssertEqual(first, again, "a resend with the same txnId made a new event")
        let seen = try await alice.event(first, in: room)
        XCTAssertEqual(seen.sender, ghost)
        guard case .message(let content) = seen.content else { return XCTFail("not a message") }
        XCTAssertEqual(content.body, "from a ghost")

        let odd = ClientTransactionID("odd/txn:#ü " .replacingOccurrences(of: " ", with: "") + UUID().uuidString)!
        let oddEvent = try await client.sendMessage(.text("odd txn"), to: room, transactionID: odd, as: ghost)
        let value6 = try await client.sendMessage(.text("odd txn"), to: room, transactionID: odd, as: ghost)
        XCTAssertEqual(value6, oddEvent)

        let redaction = try await client.redact(first, in: room, transactionID: ClientTransactionID.derived(fromSourceKey: "redact \(first)"), as: ghost)
        XCTAssertNotEqual(redaction, first)
    }

    func testTimestampSetsOriginServerTS() async throws {
        let client = harness.client
        let ghost = harness.namespace.userID(for: "ts-\(UUID().uuidString)@xmpp.example")
        _ = try await client.registerGhost(ghost)
        let (alice, _) = try await harness.userClient("alice")
        let room = try await harness.roomWithBot(alice)
        _ = try await client.join(room, as: ghost)
        let stamp: Int64 = 1_600_000_000_123
        let sent = try await client.sendMessage(.text("from the past"), to: room,
                                                transactionID: .derived(fromSourceKey: "ts \(UUID().uuidString)"), as: ghost, timestamp: stamp)
        let value7 = try await alice.event(sent, in: room).originServerTS
        XCTAssertEqual(value7, stamp)
    }

    func testRoomMessagesPagesTheTimelineNewestFirstToItsStart() async throws {
        let client = harness.client
        let ghost = harness.namespace.userID(for: "timeline-\(UUID().uuidString)@xmpp.example")
        _ = try await client.registerGhost(ghost)
        let (alice, _) = try await harness.userClient("alice")
        let room = try await harness.roomWithBot(alice)
        _ = try await client.join(room, as: ghost)
        var sent: [EventID] = []
        for index in 0..<5 {
            sent.append(try await client.sendMessage(.text("t\(index)"), to: room,
                                                     transactionID: .derived(fromSourceKey: "timeline \(UUID().uuidString)"), as: ghost))
        }
        var seen: [ClientEvent] = []
        var token: String?
        for _ in 0..<50 {
            let page = try await client.roomMessages(in: room, from: token, limit: 2, as: ghost)
            XCTAssertLessThanOrEqual(page.events.count, 2)
            XCTAssertEqual(page.undecodable, 0)
            seen += page.events
            guard let end = page.end, !page.events.isEmpty else { break }
            token = end
        }
        let messages = seen.filter { $0.type == MatrixEventType.message }
        XCTAssertEqual(messages.map(\.eventID), sent.reversed(), "newest first, every message once")
        XCTAssertTrue(messages.allSatisfy { $0.roomID == room && $0.sender == ghost && $0.unsigned?.age != nil })
        XCTAssertEqual(seen.last?.type, "m.room.create", "paged back to the room's first event")
    }

    func testMembershipCallsAndStateAsGhosts() async throws {
        let client = harness.client
        let host = harness.namespace.userID(for: "host-\(UUID().uuidString)@xmpp.example")
        let guest = harness.namespace.userID(for: "guest-\(UUID().uuidString)@xmpp.example")
        _ = try await client.registerGhost(host)
        _ = try await client.registerGhost(guest)
        let room = try await client.createRoom(CreateRoomRequest(preset: "private_chat", name: "ghost room"), as: host)
        try await client.invite(guest, to: room, as: host)
        _ = try await client.join(room, as: guest)
        let value8 = try await client.joinedMembers(of: room, as: host).keys
        XCTAssertEqual(Set(value8), [host, guest])
        _ = try await client.sendState(RoomTopicContent(topic: "bridged"), type: MatrixEventType.roomTopic, to: room, as: host)
        let value9 = try await client.stateEvent(RoomTopicContent.self, type: MatrixEventType.roomTopic, in: room, as: guest)?.topic
        XCTAssertEqual(value9, "bridged")
        let value10 = try await client.stateEvent(RoomAvatarContent.self, type: MatrixEventType.roomAvatar, in: room, as: guest)
        XCTAssertNil(value10)
        try await client.kick(guest, from: room, as: host, reason: "test")
        let value11 = try await client.joinedMembers(of: room, as: host).keys
        XCTAssertEqual(Set(value11), [host])
        try await client.ban(guest, from: room, as: host)
        do {
            _ = try await client.join(room, as: guest)
            XCTFail("a banned ghost joined")
        } catch {
            XCTAssertEqual(error.status, 403)
            XCTAssertEqual(error.call, .join)
        }
        try await client.leave(room, as: host)
        let value12 = try await client.joinedRooms(as: host).contains(room)
        XCTAssertFalse(value12)
    }

    func testEventsOfGhostRoomsReachTheListenerTyped() async throws {
        let client = harness.client
        let ghost = harness.namespace.userID(for: "typed-\(UUID().uuidString)@xmpp.example")
        _ = try await client.registerGhost(ghost)
        let (alice, aliceID) = try await harness.userClient("alice")
        let room = try await harness.roomWithBot(alice)
        _ = try await client.join(room, as: ghost)
        let message = try await alice.sendMessage(
            MessageContent(messageType: .emote, body: "waves", format: MessageContent.htmlFormat, formattedBody: "<b>waves</b>"),
            to: room, transactionID: ClientTransactionID("t" + UUID().uuidString)!)
        let reaction = try await alice.send(ReactionContent(reactingTo: message, key: "👍"), type: MatrixEventType.reaction, to: room,
                                            transactionID: ClientTransactionID("t" + UUID().uuidString)!)
        let redaction = try await alice.redact(reaction, in: room, transactionID: ClientTransactionID("t" + UUID().uuidString)!)
        try await alice.kick(ghost, from: room, reason: "bye")

        let emote = try await harness.handler.waitForEvent { $0.eventID == message }
        guard case .message(let content) = emote.content else { return XCTFail("not a message") }
        XCTAssertEqual(content.messageType, .emote)
        XCTAssertEqual(content.html, "<b>waves</b>")
        let reactionEvent = try await harness.handler.waitForEvent { $0.eventID == reaction }
        guard case .reaction(let reactionContent) = reactionEvent.content else { return XCTFail("not a reaction") }
        XCTAssertEqual(reactionContent.targetEventID, message)
        XCTAssertEqual(reactionContent.key, "👍")
        let redactionEvent = try await harness.handler.waitForEvent { $0.eventID == redaction }
        XCTAssertEqual(redactionEvent.redactedEventID, reaction)
        let leave = try await harness.handler.waitForEvent { $0.memberUserID == ghost && $0.roomID == room && $0.sender == aliceID }
        guard case .member(let member) = leave.content else { return XCTFail("not a member event") }
        XCTAssertEqual(member.membership, .leave)
        XCTAssertEqual(member.reason, "bye")
    }
}
