import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// With `encryption.allow`, an encrypted Matrix room can be linked to a MUC: the ghosts of its two XMPP occupants get
/// their own devices before they join, an end-to-end client's encrypted messages reach both occupants, an occupant's
/// answer goes out encrypted by its ghost's device, and the bot's notices by the bot's.
final class EncryptedLinkedRoomTests: XCTestCase {
    func testAnEncryptedRoomLinkedToAMUCWithTwoOccupantsIsBridgedBothWays() async throws {
        let world = try EndToEndHarness("enc-room")
        try world.editConfig { $0 + "\nencryption:\n  allow: true\n  pickle_key: \"\(GhostDeviceTests.pickleKey)\"\n" }
        try await world.startBridge()
        defer { world.stopBridge() }
        let muc = world.muc("encroom")
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let juliet = try await world.xmppUser("carol")
        try await juliet.joinRoom(muc, nick: "Juliet")

        let alice = try await world.matrixUser("alice")
        let room = try await alice.createRoom(invite: [world.botUserID])
        try await alice.setState("m.room.encryption", content: EncryptedRoomTests.megolm, in: room)
        let linked = try world.cli("link", room, muc.description)
        XCTAssertEqual(linked.status, 0, "an encrypted room may be linked with encryption allowed: \(linked.stderr)")
        try await world.waitForLink(room, status: "active")
        let ghosts = try await eventuallyValue("both occupants' ghosts in the room", timeout: 30) { () -> [String: String]? in
            let members = try await alice.members(of: room)
            let byNick = Dictionary(members.compactMap { id, name in name.map { ($0, id) } }, uniquingKeysWith: { first, _ in first })
            guard let romeoGhost = byNick["Romeo"], let julietGhost = byNick["Juliet"] else { return nil }
            return ["Romeo": romeoGhost, "Juliet": julietGhost]
        }

        // Each ghost has its own device, cross-signed by its own identity.
        for ghost in ghosts.values { _ = try GhostDeviceTests.verifiedDevice(of: ghost, in: try await alice.queryKeys(of: [ghost])) }

        let nio = try await NioUser("alice", bed: world.bed, storeDirectory: world.directory.appendingPathComponent("nio-alice"))
        for ghost in ghosts.values { try await nio.waitJoined(ghost, in: room) }
        let sent = try await nio.send("hello both, end to end", to: room)
        let onServer = try await alice.timeline(of: room).first { $0.eventID == sent }
        XCTAssertEqual(onServer?.type, "m.room.encrypted")
        for occupant in [romeo, juliet] {
            let message = try await occupant.nextMessage(from: muc, nick: "alice", "alice's encrypted message") { $0.body != nil }
            XCTAssertEqual(message.body, "hello both, end to end")
        }

        // Romeo answers: his ghost encrypts it; nio decrypts it.
        try romeo.sendGroupchat(to: muc, body: "hi alice, from romeo", extensions: [])
        let answers = try await nio.messages(in: room, from: ghosts["Romeo"]!)
        XCTAssertEqual(answers.map(\.body), ["hi alice, from romeo"])
        XCTAssertEqual(answers.map(\.decrypted), [true])

        // A message the bridge cannot decrypt (this one was made up) is told by the bot, encrypted by its own device.
        try await alice.sendEvent("m.room.encrypted", content: GhostDeviceTests.ciphertext, to: room)
        let told = try await nio.messages(in: room, from: world.botUserID).filter(\.notice)
        XCTAssertEqual(told.count, 1, "\(told)")
        XCTAssertTrue(told.first?.body.hasPrefix("🔒 The bridge could not decrypt a message sent here, so it did not reach the XMPP room")
                      == true, "\(told)")
        XCTAssertEqual(told.map(\.decrypted), [true])
        romeo.close()
        juliet.close()
    }
}
