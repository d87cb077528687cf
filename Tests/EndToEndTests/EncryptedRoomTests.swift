import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// Encrypted Matrix rooms, which this bridge cannot read: linking one is refused, and an encrypted message in a linked
/// room is never dropped in silence (the room gets a notice) nor bridged.
final class EncryptedRoomTests: XCTestCase {
    static var megolm: [String: Any] { ["algorithm": "m.megolm.v1.aes-sha2"] }

    func testLinkingAnEncryptedRoomIsRefusedAndTheBotLeavesIt() async throws {
        let world = try EndToEndHarness("enc-link")
        let alice = try await world.matrixUser("alice")
        let room = try await alice.createRoom(invite: [world.botUserID])
        try await alice.setState("m.room.encryption", content: Self.megolm, in: room)
        let result = try world.cli("link", room, world.muc("enclink").description)
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("is end-to-end encrypted and this bridge cannot read encrypted messages"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertEqual(try world.links().count, 0)
        let members = try await alice.members(of: room)
        XCTAssertFalse(members.keys.contains(world.botUserID), "the bot stayed in the encrypted room: \(members)")
    }

    func testAnEncryptedMessageGetsOneNoticeAndIsNotBridged() async throws {
        let world = try EndToEndHarness("enc-msg")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("encmsg")
        let observer = try await world.xmppUser("bob")
        try await observer.joinRoom(muc, nick: "Observer")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        _ = try await observer.nextPresence(within: 20, "alice's occupant") { $0.from?.resource == "alice" && $0.type == .available }

        let ciphertext = "AwgAEnACgAkLmt6qF84IK++J7UDH2Za1YVchHyprqTqsg2yyOwAtHaZTwyNg37afzg8f3r9IsN9rH4RNFg"
        let encrypted: [String: Any] = ["algorithm": "m.megolm.v1.aes-sha2", "ciphertext": ciphertext,
                                        "device_id": "ALICEDEVICE", "sender_key": "c8qCmkNpDmT9W3pIw9lmLBmdTtqYpoGkrLMBUTfxgSY",
                                        "session_id": "2PO8ZDnQpbMZaWxhGzGZNPaGDqCGw6gG1AvZczWYd9w"]
        try await alice.sendEvent("m.room.encrypted", content: encrypted, to: room)
        try await alice.sendEvent("m.room.encrypted", content: encrypted, to: room)
        let notices = try await eventuallyValue("the bot's notice", timeout: 30) {
            let found = try await alice.messages(in: room).filter { $0.sender == world.botUserID && $0.msgtype == "m.notice" }
            return found.isEmpty ? nil : found
        }
        XCTAssertTrue(notices[0].body?.hasPrefix("🔒 This bridge cannot read encrypted messages") == true, notices[0].description)

        // A sentinel behind them: everything the MUC got before it is in the observer's queue.
        try await alice.send("sentinel after the encrypted ones", to: room)
        let inMUC = try await world.xmppMessages(observer, from: muc, untilBody: "sentinel after the encrypted ones", excludingNick: "Observer")
        XCTAssertEqual(inMUC.map(\.body), ["sentinel after the encrypted ones"])
        XCTAssertEqual(inMUC.last?.from?.resource, "alice")
        // One notice for both: the second encrypted message fell within the hour.
        let all = try await world.matrixMessages(alice, in: room, untilBody: "sentinel after the encrypted ones")
        XCTAssertEqual(all.filter { $0.sender == world.botUserID && $0.msgtype == "m.notice" }.count, 1, "\(all)")

        // Turning encryption on is answered at once.
        try await alice.setState("m.room.encryption", content: Self.megolm, in: room)
        let turnedOn = try await eventuallyValue("the notice that encryption was turned on", timeout: 30) {
            try await alice.messages(in: room).first { $0.sender == world.botUserID && $0.body?.contains("Encryption was turned on") == true }
        }
        XCTAssertFalse(turnedOn.body?.contains("@") ?? true, turnedOn.description)
        let metrics = try await MetricsScrape.fetch(port: world.bed.metricsPort)
        XCTAssertEqual(metrics[#"isthmus_encrypted_events_total{room="linked"}"#], 2, metrics.text)
        observer.close()
    }
}
