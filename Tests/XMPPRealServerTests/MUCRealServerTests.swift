import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPPComponent

/// MUC occupants under the component and MAM catch-up against the bed's real XMPP server (Prosody or ejabberd).
final class MUCRealServerTests: XCTestCase {
    func testJoinThatCreatesARoomConfiguresItAndDiscoShowsItsFeatures() async throws {
        let bed = try TestBed.fromEnvironment()
        let component = try await RealComponent.connected(bed, in: self)
        let room = bed.uniqueRoom("create")
        let creator = try await component.join(room, nick: "Creator", as: bed.puppet("creator_matrix"))
        XCTAssertTrue(creator.createdRoom, "status 201 expected: \(creator.statusCodes)")
        XCTAssertTrue(creator.statusCodes.contains(.selfPresence))
        XCTAssertEqual(creator.affiliation, .owner)

        // Unlocked by the instant-room form: a real user can now join (a locked room would refuse).
        let alice = try await bed.client("alice")
        let aliceSelf = try await alice.joinRoom(room, nick: "AliceC2S")
        XCTAssertFalse(aliceSelf.statusCodes.contains(.roomCreated))

        let info = try await component.connection.discoInfo(of: room)
        XCTAssertTrue(info.supportsMAM)
        XCTAssertTrue(info.supportsStableIDs)
        switch bed.xmppServer {
        case .prosody:
            XCTAssertTrue(info.supportsMAMExtended)
            XCTAssertTrue(info.supportsOccupantID)
        case .ejabberd:
            // ejabberd 23.01 has neither: XEP-0421 arrives in 23.10, and its MAM refuses the `after-id` filter
            // (catch-up pages with RSM instead, see ComponentConnection.mamQuery). Identity falls back to the real
            // JID or the nick (PROTOCOL.md).
            XCTAssertFalse(info.supportsMAMExtended)
            XCTAssertFalse(info.supportsOccupantID)
        }
        alice.close()
        await component.close()
    }

    func testTwoOccupantsExchangeMessagesAndSeeReflectionsWithStanzaIDAndOriginID() async throws {
        let bed = try TestBed.fromEnvironment()
        let component = try await RealComponent.connected(bed, in: self)
        let room = bed.uniqueRoom("exchange")
        let alice = bed.puppet("alice_matrix"), bob = bed.puppet("bob_matrix")
        try await component.join(room, nick: "Alice", as: alice)
        try await component.join(room, nick: "Bob", as: bob)
        let carol = try await bed.client("carol")
        try await carol.joinRoom(room, nick: "Carol")

        for (sender, nick) in [(alice, "Alice"), (bob, "Bob")] {
            let body = "from \(nick): <tags> & \"quotes\" 'apostrophes' ✓"
            let sent = try await component.connection.sendGroupchat(from: sender, room: room, body: body)
            let origin = try XCTUnwrap(sent.originID)
            var stanzaIDs: [StanzaID] = []
            for occupant in [alice, bob] {
                let copy = try await component.nextMessage(to: occupant) { $0.originID == origin }
                XCTAssertEqual(copy.body, body, "body altered in \(occupant)'s copy")
                XCTAssertEqual(copy.from, room.with(resource: nick))
                XCTAssertEqual(copy.id, sent.id, "the MUC reflects the sender's id")
                stanzaIDs.append(try XCTUnwrap(copy.stanzaID(by: room), "no stanza-id by the room in \(occupant)'s copy"))
            }
            let carolsCopy = try await carol.nextMessage { $0.originID == origin }
            XCTAssertEqual(carolsCopy.body, body)
            stanzaIDs.append(try XCTUnwrap(carolsCopy.stanzaID(by: room)))
            XCTAssertEqual(Set(stanzaIDs).count, 1, "every copy carries the same room stanza-id: \(stanzaIDs)")
        }
        carol.close()
        await component.close()
    }

    func testNickChangeAndLeaveAreConfirmedAndSeenByOthers() async throws {
        let bed = try TestBed.fromEnvironment()
        let component = try await RealComponent.connected(bed, in: self)
        let room = bed.uniqueRoom("nick")
        let alice = bed.puppet("alice_matrix")
        try await component.join(room, nick: "Alice", as: alice)
        let bob = try await bed.client("bob")
        try await bob.joinRoom(room, nick: "BobC2S")

        let outcome = try await component.connection.changeNick(room: room, to: "Alicia", occupant: alice)
        guard case .changed(let changed) = outcome else { return XCTFail("nick change: \(outcome)") }
        XCTAssertEqual(changed.nick, "Alicia")
        let step = try await bob.nextPresence { $0.from == room.with(resource: "Alice") && $0.type == .unavailable }
        XCTAssertTrue(step.statusCodes.contains(.nickChanged))
        XCTAssertEqual(step.mucUser?.item?.nick, "Alicia")

        let left = try await component.connection.leave(room: room, nick: "Alicia", occupant: alice)
        guard case .left(let gone) = left else { return XCTFail("leave: \(left)") }
        XCTAssertEqual(gone.presence.type, .unavailable)
        let seen = try await bob.nextPresence { $0.from == room.with(resource: "Alicia") && $0.type == .unavailable }
        XCTAssertFalse(seen.statusCodes.contains(.nickChanged))

        // Not an occupant any more: a self-ping says so, and a message bounces with not-acceptable.
        let ping = try await component.connection.selfPing(room: room, nick: "Alicia", occupant: alice)
        guard case .notJoined = ping else { return XCTFail("self-ping after leaving: \(ping)") }
        let stray = try await component.connection.sendGroupchat(from: alice, room: room, body: "still here?")
        let bounce = try await component.nextMessage(to: alice) { $0.id == stray.id }
        XCTAssertTrue(bounce.isNotJoinedBounce, "expected a not-acceptable bounce, got \(bounce)")
        bob.close()
        await component.close()
    }

    func testNickConflictIsATypedOutcome() async throws {
        let bed = try TestBed.fromEnvironment()
        let component = try await RealComponent.connected(bed, in: self)
        let room = bed.uniqueRoom("conflict")
        let alice = try await bed.client("alice")
        try await alice.joinRoom(room, nick: "Taken")
        let outcome = try await component.connection.join(room: room, nick: "Taken", occupant: bed.puppet("bob_matrix"))
        XCTAssertEqual(outcome, .nickConflict)
        // The same puppet can still join under another nick, and a self-ping confirms it.
        try await component.join(room, nick: "NotTaken", as: bed.puppet("bob_matrix"))
        let ping = try await component.connection.selfPing(room: room, nick: "NotTaken", occupant: bed.puppet("bob_matrix"))
        XCTAssertEqual(ping, .joined)
        alice.close()
        await component.close()
    }

    func testMAMAfterIDReturnsExactlyTheMessagesAfterIt() async throws {
        let bed = try TestBed.fromEnvironment()
        let component = try await RealComponent.connected(bed, in: self)
        let room = bed.uniqueRoom("mam")
        let alice = bed.puppet("alice_matrix")
        try await component.join(room, nick: "Alice", as: alice)

        var stanzaIDs: [StanzaID] = []
        for index in 1...5 {
            let sent = try await component.connection.sendGroupchat(from: alice, room: room, body: "message \(index)")
            let reflection = try await component.nextMessage(to: alice) { $0.originID == sent.originID }
            stanzaIDs.append(try XCTUnwrap(reflection.stanzaID(by: room)))
        }

        // Pages of two: three messages after the second one take two pages.
        let after = try await component.connection.mamQuery(room: room, as: alice, after: stanzaIDs[1], pageSize: 2)
        XCTAssertEqual(after.map(\.id), Array(stanzaIDs[2...]))
        XCTAssertEqual(after.map(\.message.body), ["message 3", "message 4", "message 5"])
        for archived in after {
            XCTAssertEqual(archived.message.stanzaID(by: room), archived.id)
            XCTAssertNotNil(archived.message.delay, "archived messages carry their delay stamp")
            XCTAssertEqual(archived.message.from, room.with(resource: "Alice"))
            XCTAssertNotNil(archived.message.originID)
            if bed.xmppServer == .prosody {
                XCTAssertNotNil(archived.message.occupantID)  // ejabberd 23.01 has no XEP-0421 (it arrives in 23.10)
            }
        }
        let afterLast = try await component.connection.mamQuery(room: room, as: alice, after: stanzaIDs[4])
        XCTAssertEqual(afterLast, [])

        // By time when no id is known: everything since a minute ago.
        let since = try await component.connection.mamQuery(room: room, as: alice, since: Date().addingTimeInterval(-60))
        XCTAssertEqual(since.map(\.id), stanzaIDs)
        await component.close()
    }
}
