import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// The bridge down while an end-to-end client shares a new room key and sends with it: Synapse 1.163 does not push
/// to-device messages again after a failed transaction (its #14710), so the key can be lost on the way. The message
/// then must not vanish: it reaches the XMPP user (the key came) or the DM is told it could not be decrypted — after
/// the bridge asked for the key (`m.room_key_request`) and waited.
final class EncryptedOutageTests: XCTestCase {
    func testAMessageSentWithANewKeyWhileTheBridgeIsDownArrivesOrTheDMIsTold() async throws {
        let world = try EndToEndHarness("enc-outage")
        try world.editConfig { $0 + "\nencryption:\n  allow: true\n  pickle_key: \"\(GhostDeviceTests.pickleKey)\"\n" }
        try await world.startBridge()
        let scene = try await PrivateMessageTests.Scene(world, muc: "encoutage", account: "bob", nick: "Romeo")
        let (romeo, ghost) = (scene.occupant, scene.ghost)
        let nio = try await NioUser("alice", bed: world.bed, storeDirectory: world.directory.appendingPathComponent("nio-alice"))
        let dm = try await nio.createDirectRoom(inviting: ghost)
        try await nio.waitJoined(ghost, in: dm)
        try await nio.send("before the outage", to: dm)
        let before = try await romeo.nextMessage(within: 30, "alice's message before the outage") { $0.type == .chat && $0.body != nil }
        XCTAssertEqual(before.body, "before the outage")

        world.stopBridge()
        try await nio.rotate(in: dm)
        try await nio.send("while the bridge is down", to: dm)
        try await world.startBridge()
        defer { world.stopBridge() }

        // Whichever happens, it happens once: the text reaches Romeo, or the DM gets the bridge's notice.
        let outcome = try await eventuallyValue("the message delivered or the DM told", timeout: 60) { () -> String? in
            if let told = try await nio.messages(in: dm, from: ghost, count: 1, timeout: 2).first(where: \.notice) { return told.body }
            return Self.chats(romeo).first { $0 == "while the bridge is down" }
        }
        if outcome != "while the bridge is down" {
            XCTAssertTrue(outcome.hasPrefix("🔒 The bridge could not decrypt a message sent here"), outcome)
        }

        // And the DM goes on: a sentinel after the outage arrives (with the same new key when it came, or nio's next one).
        try await nio.rotate(in: dm)
        try await nio.send("sentinel after the outage", to: dm)
        let sentinel = try await romeo.nextMessage(within: 30, "alice's sentinel") { $0.type == .chat && $0.body == "sentinel after the outage" }
        XCTAssertEqual(sentinel.from, scene.aliceOccupant)
        let told = try await nio.messages(in: dm, from: ghost, count: 1, timeout: 2).filter(\.notice)
        XCTAssertLessThanOrEqual(told.count, 1, "told more than once: \(told)")
        XCTAssertFalse(outcome == "while the bridge is down" && !told.isEmpty, "delivered and told: \(told)")
        romeo.close()
    }

    /// The bodies of the chat messages Romeo has received and not read yet.
    static func chats(_ client: XMPPTestClient) -> [String] {
        client.queuedStanzas.compactMap { stanza in
            if case .message(let message) = stanza, message.type == .chat { message.body } else { nil }
        }
    }
}
