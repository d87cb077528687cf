import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// A ghost's Megolm session follows the room's `m.room.encryption`: it is replaced after `rotation_period_msgs`
/// messages and when a member leaves — and the Matrix user's client still decrypts every message.
final class EncryptionRotationTests: XCTestCase {
    func testTheGhostsSessionIsReplacedAfterTheRoomsMessageCountAndWhenAMemberLeaves() async throws {
        let world = try EndToEndHarness("enc-rotate")
        try world.editConfig { $0 + "\nencryption:\n  allow: true\n  pickle_key: \"\(GhostDeviceTests.pickleKey)\"\n" }
        try await world.startBridge()
        defer { world.stopBridge() }
        let muc = world.muc("encrotate")
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let alice = try await world.matrixUser("alice")
        let room = try await alice.createRoom(invite: [world.botUserID])
        try await alice.setState("m.room.encryption", content: ["algorithm": "m.megolm.v1.aes-sha2", "rotation_period_msgs": 2], in: room)
        XCTAssertEqual(try world.cli("link", room, muc.description).status, 0)
        try await world.waitForLink(room, status: "active")
        let ghost = try await eventuallyValue("Romeo's ghost", timeout: 30) { try await alice.members(of: room).first { $0.value == "Romeo" }?.key }
        let nio = try await NioUser("alice", bed: world.bed, storeDirectory: world.directory.appendingPathComponent("nio-alice"))
        try await nio.waitJoined(ghost, in: room)

        // Three messages with a rotation every two: the third has a new session.
        for body in ["one", "two", "three"] { try romeo.sendGroupchat(to: muc, body: body, extensions: []) }
        let first = try await nio.messages(in: room, from: ghost, count: 3)
        XCTAssertEqual(first.map(\.body), ["one", "two", "three"])
        XCTAssertEqual(first.map(\.decrypted), [true, true, true])
        let sessions = try await sessionIDs(of: ghost, in: room, alice: alice)
        XCTAssertEqual(sessions.count, 3)
        XCTAssertEqual(sessions[0], sessions[1])
        XCTAssertNotEqual(sessions[1], sessions[2], "rotated after rotation_period_msgs (2)")

        // Someone leaves: the next message has a new session (the one who left cannot read it).
        let bob = try await world.matrixUser("bob")
        try await alice.invite(bob.userID, to: room)
        try await bob.join(room)
        try romeo.sendGroupchat(to: muc, body: "four", extensions: [])
        try await bob.leave(room)
        // The leave reaches the bridge before the next message: a barrier through the bridge (bob's puppet leaves the MUC).
        _ = try await romeo.nextPresence(within: 30, "bob's occupant leaving") { $0.from?.resource == "bob" && $0.type == .unavailable }
        try romeo.sendGroupchat(to: muc, body: "five", extensions: [])
        let all = try await nio.messages(in: room, from: ghost, count: 5)
        XCTAssertEqual(all.map(\.body), ["one", "two", "three", "four", "five"])
        XCTAssertEqual(all.map(\.decrypted), [true, true, true, true, true])
        let after = try await sessionIDs(of: ghost, in: room, alice: alice)
        XCTAssertEqual(after.count, 5)
        XCTAssertNotEqual(after[3], after[4], "a new session after bob left")
        romeo.close()
    }

    /// The Megolm session ids of `ghost`'s encrypted events in `room`, oldest first (read in the clear part).
    func sessionIDs(of ghost: String, in room: String, alice: MatrixTestUser) async throws -> [String] {
        try await alice.timeline(of: room).filter { $0.sender == ghost && $0.type == "m.room.encrypted" }
            .compactMap { $0.content["session_id"] }
    }
}
