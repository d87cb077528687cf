import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// An encrypted DM with a real end-to-end client (matrix-nio on vodozemac): with `encryption.allow`, the ghost's
/// device receives the room key over Olm and the user's encrypted messages reach the XMPP occupant; the occupant's
/// answers go out encrypted by the ghost's device, and nio decrypts them — also after a restart.
final class EncryptedDirectChatTests: XCTestCase {
    func testAnEncryptedDMWithAnEndToEndClientWorksBothWaysAcrossARestart() async throws {
        let world = try EndToEndHarness("enc-dm")
        try world.editConfig { $0 + "\nencryption:\n  allow: true\n  pickle_key: \"\(GhostDeviceTests.pickleKey)\"\n" }
        try await world.startBridge()
        let scene = try await PrivateMessageTests.Scene(world, muc: "encdm", account: "bob", nick: "Romeo")
        let (romeo, ghost, aliceOccupant) = (scene.occupant, scene.ghost, scene.aliceOccupant)
        let nio = try await NioUser("alice", bed: world.bed, storeDirectory: world.directory.appendingPathComponent("nio-alice"))

        let dm = try await nio.createDirectRoom(inviting: ghost)
        try await nio.waitJoined(ghost, in: dm)
        let sent = try await nio.send("hello romeo, end to end", to: dm)
        let onServer = try await scene.alice.timeline(of: dm).first { $0.eventID == sent }
        XCTAssertEqual(onServer?.type, "m.room.encrypted", "nio encrypted it: the homeserver holds only ciphertext")
        let first = try await romeo.nextMessage(within: 30, "alice's encrypted message") { $0.type == .chat && $0.body != nil }
        XCTAssertEqual(first.body, "hello romeo, end to end")
        XCTAssertEqual(first.from, aliceOccupant)

        // Romeo answers in the same DM: encrypted by the ghost's device, decrypted by nio.
        try romeo.send(.message(PrivateMessageTests.privateMessage(to: aliceOccupant, body: "hi alice")))
        let answers = try await nio.messages(in: dm, from: ghost)
        XCTAssertEqual(answers.map(\.body), ["hi alice"])
        XCTAssertEqual(answers.map(\.decrypted), [true], "the ghost's answer went out encrypted")

        // After a restart the kept room key still decrypts: the next message (same Megolm session) goes out once.
        world.stopBridge()
        try await world.startBridge()
        defer { world.stopBridge() }
        try await nio.send("after the restart", to: dm)
        let second = try await romeo.nextMessage(within: 30, "alice's message after the restart") { $0.type == .chat && $0.body != nil }
        XCTAssertEqual(second.body, "after the restart")
        // And the ghost's next answer: a new outbound session (they live in memory), shared again.
        try romeo.send(.message(PrivateMessageTests.privateMessage(to: aliceOccupant, body: "welcome back")))
        let later = try await nio.messages(in: dm, from: ghost, count: 2)
        XCTAssertEqual(later.map(\.body), ["hi alice", "welcome back"])
        XCTAssertEqual(later.map(\.decrypted), [true, true])

        // A new device of alice's: once it has spoken (its key reaches the ghost), the ghost's answers reach it too.
        let phone = try await NioUser("alice", bed: world.bed, storeDirectory: world.directory.appendingPathComponent("nio-alice-phone"),
                                      deviceName: "isthmus e2e (nio, second device)")
        try await phone.waitJoined(ghost, in: dm)
        try await phone.send("from my phone", to: dm)
        let fromPhone = try await romeo.nextMessage(within: 30, "alice's message from her phone") { $0.type == .chat && $0.body != nil }
        XCTAssertEqual(fromPhone.body, "from my phone")
        try romeo.send(.message(PrivateMessageTests.privateMessage(to: aliceOccupant, body: "hello phone")))
        let onPhone = try await phone.messages(in: dm, from: ghost).filter { $0.body == "hello phone" }
        XCTAssertEqual(onPhone.map(\.decrypted), [true], "the new device got the ghost's room key")

        // Nothing was refused: every message the ghost sent was an answer, none a notice.
        let fromGhost = try await nio.messages(in: dm, from: ghost, count: 3)
        XCTAssertEqual(fromGhost.filter(\.notice).map(\.body), [], "the ghost told the DM something was not bridged")

        // A message whose key never reached the bridge is told, in a notice the ghost's device encrypts.
        try await scene.alice.sendEvent("m.room.encrypted", content: GhostDeviceTests.ciphertext, to: dm)
        let told = try await nio.messages(in: dm, from: ghost, count: 4).filter(\.notice)
        XCTAssertEqual(told.count, 1, "\(told)")
        XCTAssertTrue(told.first?.body.hasPrefix("🔒 The bridge could not decrypt a message sent here") == true, "\(told)")
        XCTAssertEqual(told.map(\.decrypted), [true])
        romeo.close()
    }
}
