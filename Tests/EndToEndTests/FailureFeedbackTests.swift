import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMLStream
import XMPP

/// A message that cannot be delivered is reported to its sender on their own side, never dropped silently.
final class FailureFeedbackTests: XCTestCase {
    func testMatrixSenderGetsANoticeWhenTheMUCRefusesTheirOccupant() async throws {
        let world = try EndToEndHarness("refused-m")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("refusedm")
        let owner = try await world.xmppUser("bob")
        try await owner.joinRoom(muc, nick: "Owner")          // bob creates the room and owns it
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        _ = try await owner.nextPresence(within: 20, "alice's occupant") { $0.from?.resource == "alice" && $0.type == .available }

        // The owner bans alice's occupant (affiliation outcast, XEP-0045 §9.1): she can no longer speak in the MUC.
        let puppet = "alice\\3alocalhost@\(world.bed.componentDomain)"
        let item = XElement("item", namespace: XMPPNamespace.mucAdmin, ["affiliation": "outcast", "jid": puppet])
        let ban = IQ(type: .set, to: muc, payload: .other(XElement("query", namespace: XMPPNamespace.mucAdmin, children: [.element(item)])))
        try owner.send(.iq(ban))
        _ = try await owner.nextPresence(within: 20, "alice's occupant banned") {
            $0.from?.resource == "alice" && $0.statusCodes.contains(.banned)
        }

        try await alice.send("can anyone hear me?", to: room)
        let notice = try await eventuallyValue("a notice from the bot", timeout: 30) {
            try await alice.messages(in: room).first { $0.sender == world.botUserID && $0.msgtype == "m.notice" }
        }
        XCTAssertTrue(notice.body?.contains("could not be delivered") == true, notice.description)
        owner.close()
    }

    func testXMPPSenderGetsAPrivateMessageWhenMatrixRefusesTheGhost() async throws {
        let world = try EndToEndHarness("refused-x")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("refusedx")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        try await eventually("Romeo's ghost joined") { try await alice.members(of: room).values.contains("Romeo") }

        // Only moderators may speak in the Matrix room now (the bot keeps its power to invite and kick).
        try await alice.setState("m.room.power_levels", content: [
            "users": [world.botUserID: 50], "events_default": 50, "invite": 0, "state_default": 50,
        ], in: room)
        try romeo.sendGroupchat(to: muc, body: "hello?")
        let notice = try await romeo.nextMessage(within: 30, "a private failure notice") { $0.type == .chat }
        XCTAssertTrue(notice.body?.contains("could not be delivered to Matrix") == true, String(describing: notice.body))
        XCTAssertEqual(notice.from?.bare, muc.bare, "sent through the room, from the bridge's occupant")
        romeo.close()
    }
}
