import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// `encryption.default` and `encryption.require`: the DM an XMPP user starts is encrypted, and its first message —
/// sent while the Matrix user is only invited — decrypts on their device; with `require`, an unencrypted room is not
/// linked and an unencrypted DM invitation is declined with the reason.
final class EncryptionPolicyTests: XCTestCase {
    func testWithDefaultTheDMAnXMPPUserStartsIsEncryptedAndItsFirstMessageDecryptsForTheInvitedUser() async throws {
        let world = try EndToEndHarness("enc-default")
        try world.editConfig { $0 + "\nencryption:\n  allow: true\n  default: true\n  pickle_key: \"\(GhostDeviceTests.pickleKey)\"\n" }
        try await world.startBridge()
        defer { world.stopBridge() }
        let scene = try await PrivateMessageTests.Scene(world, muc: "encdefault", account: "bob", nick: "Romeo")
        let (alice, romeo, ghost, aliceOccupant) = (scene.alice, scene.occupant, scene.ghost, scene.aliceOccupant)
        // Alice's device exists before the DM does: the ghost's first message is shared with it while she is invited.
        let nio = try await NioUser("alice", bed: world.bed, storeDirectory: world.directory.appendingPathComponent("nio-alice"))

        try romeo.send(.message(PrivateMessageTests.privateMessage(to: aliceOccupant, body: "psst, end to end")))
        let invitation = try await eventuallyValue("alice invited to a DM", timeout: 30) {
            try await alice.invitations().first { $0.inviter == ghost }
        }
        XCTAssertTrue(invitation.state.contains { $0["type"] == "m.room.encryption" }, "the DM is created encrypted: \(invitation.state)")
        try await nio.join(invitation.room)
        let first = try await nio.messages(in: invitation.room, from: ghost)
        XCTAssertEqual(first.map(\.body), ["psst, end to end"])
        XCTAssertEqual(first.map(\.decrypted), [true], "sent encrypted, with the key shared to the invited user's device")
        let fromGhost = try await alice.timeline(of: invitation.room).filter { $0.sender == ghost }.map(\.type)
        XCTAssertTrue(fromGhost.contains("m.room.encrypted") && !fromGhost.contains("m.room.message"), "nothing in the clear: \(fromGhost)")

        // And back: alice's encrypted answer reaches Romeo.
        try await nio.waitJoined(ghost, in: invitation.room)
        try await nio.send("hello romeo", to: invitation.room)
        let reply = try await romeo.nextMessage(within: 30, "alice's encrypted reply") { $0.type == .chat && $0.body != nil }
        XCTAssertEqual(reply.body, "hello romeo")
        romeo.close()
    }

    func testWithRequireAnUnencryptedRoomIsNotLinkedAndAnUnencryptedDMIsDeclined() async throws {
        let world = try EndToEndHarness("enc-require")
        try world.editConfig { $0 + "\nencryption:\n  allow: true\n  require: true\n  pickle_key: \"\(GhostDeviceTests.pickleKey)\"\n" }
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")

        // An unencrypted room is refused, saying why; the bot leaves it again.
        let plain = try await alice.createRoom(invite: [world.botUserID])
        let refused = try world.cli("link", plain, world.muc("encrequireplain").description)
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("is not end-to-end encrypted") && refused.stderr.contains("encryption.require"), refused.stderr)
        try await eventually("the bot left the unencrypted room") { try await alice.members(of: plain)[world.botUserID] == nil }

        // An encrypted room is linked; its occupant's ghost comes in.
        let muc = world.muc("encrequire")
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let room = try await alice.createRoom(invite: [world.botUserID])
        try await alice.setState("m.room.encryption", content: EncryptedRoomTests.megolm, in: room)
        let linked = try world.cli("link", room, muc.description)
        XCTAssertEqual(linked.status, 0, linked.stderr)
        let ghost = try await eventuallyValue("Romeo's ghost in the linked room", timeout: 30) {
            try await alice.members(of: room).first(where: { $0.value == "Romeo" })?.key
        }

        // An unencrypted DM invitation of that ghost is declined with the reason.
        let dm = try await alice.createDirectRoom(inviting: ghost)
        let reason = try await eventuallyValue("the ghost declined the unencrypted DM", timeout: 30) { () -> String? in
            guard let member = try await alice.state("m.room.member", stateKey: ghost, in: dm), member["membership"] as? String == "leave" else { return nil }
            return member["reason"] as? String ?? ""
        }
        XCTAssertEqual(reason, "This bridge only bridges encrypted chats: start an encrypted direct chat.")
        romeo.close()
    }
}
