import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// The bridge down while an end-to-end client shares a new room key and sends with it: Synapse 1.163 does not push
/// to-device messages again after a failed transaction (its #14710), so the key is lost on the way. The message does
/// not vanish: the bridge holds it and asks the sender's devices for the key (`m.room_key_request`); the client, which
/// answers as Element does (its session went to the ghost's device), sends it again, and the message reaches the XMPP
/// user. Had no answer come within the wait, the DM would have been told (`EncryptedDirectChatTests`).
final class EncryptedOutageTests: XCTestCase {
    func testAMessageSentWithANewKeyWhileTheBridgeIsDownArrivesThroughAKeyRequest() async throws {
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

        let recovered = try await romeo.nextMessage(within: 30, "the message sent while the bridge was down") {
            $0.type == .chat && $0.body == "while the bridge is down"
        }
        XCTAssertEqual(recovered.from, scene.aliceOccupant)
        let forwarded = try await nio.forwardedKeys()
        XCTAssertGreaterThanOrEqual(forwarded, 1, "the key came back through the bridge's key request")

        // And the DM goes on: a sentinel after the outage arrives (with the same new key when it came, or nio's next one).
        try await nio.rotate(in: dm)
        try await nio.send("sentinel after the outage", to: dm)
        let sentinel = try await romeo.nextMessage(within: 30, "alice's sentinel") { $0.type == .chat && $0.body == "sentinel after the outage" }
        XCTAssertEqual(sentinel.from, scene.aliceOccupant)
        XCTAssertEqual(Self.chats(romeo).filter { $0 == "while the bridge is down" }, [], "delivered twice")
        let told = try await nio.messages(in: dm, from: ghost, count: 1, timeout: 2).filter(\.notice)
        XCTAssertEqual(told.map(\.body), [], "the message arrived: nothing to tell")
        romeo.close()
    }

    /// The bodies of the chat messages Romeo has received and not read yet.
    static func chats(_ client: XMPPTestClient) -> [String] {
        client.queuedStanzas.compactMap { stanza in
            if case .message(let message) = stanza, message.type == .chat { message.body } else { nil }
        }
    }
}
