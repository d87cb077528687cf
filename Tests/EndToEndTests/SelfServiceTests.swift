import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// Self-service linking from inside a Matrix room, against real servers: the bot joins on invitation, `!isthmus link`
/// asks the named MUC owner in private, and only that owner's `yes` links.
final class SelfServiceTests: XCTestCase {
    func testAnOwnersYesLinksTheRoomThenStatusAndUnlinkWork() async throws {
        let world = try EndToEndHarness("self-service")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("self")
        let romeo = try await world.xmppUser("bob")
        defer { romeo.close() }
        try await romeo.joinRoom(muc, nick: "Romeo")   // creates the room: Romeo is its owner
        // Alice created the room (version 12): as a creator she has unlimited power without being in `users`.
        let room = try await alice.createRoom(name: "Lounge \(world.suffix)", invite: [world.botUserID])
        try await world.waitForBot(alice, in: room)

        try await alice.send("!isthmus link \(muc) Romeo", to: room)
        let question = try await world.privateMessage(to: romeo, from: muc)
        let asked = try XCTUnwrap(question.body)
        XCTAssertTrue(asked.hasPrefix("alice, a moderator of the Matrix room “Lounge \(world.suffix)”"), asked)
        XCTAssertTrue(asked.contains("Reply yes within 5 minutes"), asked)
        XCTAssertFalse(asked.contains(alice.userID) || asked.contains(room), "no Matrix ids into XMPP: \(asked)")
        _ = try await world.botNotice(alice, in: room, containing: "Asked Romeo in \(muc)")

        try romeo.send(.message(Message(type: .chat, to: muc.with(resource: "Matrix")!, body: "yes")))
        _ = try await world.botNotice(alice, in: room, containing: "Linked with \(muc), allowed by Romeo.")
        let thanks = try await world.privateMessage(to: romeo, from: muc)
        XCTAssertEqual(thanks.body, "Thank you: this room is now bridged with “Lounge \(world.suffix)”.")
        try await world.waitForLink(room, status: "active")

        // Messages cross both ways; commands and the bot's notices do not.
        try await alice.send("!isthmus status", to: room)
        let status = try await world.botNotice(alice, in: room, containing: "This room is linked with")
        XCTAssertEqual(status.body, "This room is linked with \(muc): active. The bridge's XMPP connection is connected.")
        try romeo.sendGroupchat(to: muc, body: "hello from xmpp")
        let bridged = try await world.matrixMessages(alice, in: room, untilBody: "hello from xmpp", excluding: alice.userID)
        XCTAssertEqual(bridged.filter { $0.sender != world.botUserID }.map(\.body), ["hello from xmpp"])
        try await alice.send("hello from matrix", to: room)
        let seen = try await world.xmppMessages(romeo, from: muc, untilBody: "hello from matrix", excludingNick: "Romeo")
        XCTAssertEqual(seen.map(\.body), ["This room is now bridged with the Matrix room “Lounge \(world.suffix)”, as Romeo allowed.",
                                          "hello from matrix"],
                       "the bridge's announcement, then alice's message; neither the command nor a notice")

        try await alice.send("!isthmus unlink", to: room)
        _ = try await world.botNotice(alice, in: room, containing: "Unlinking this room from \(muc)")
        try await eventually("link gone", timeout: 20) { try world.links().isEmpty }
        try await eventually("bot left the Matrix room", timeout: 20) { try await alice.members(of: room)[world.botUserID] == nil }
    }

    func testLinkRequestsAreRefusedWithoutPowerAndForANickThatIsNotAnOwner() async throws {
        let world = try EndToEndHarness("self-service-refusals")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let bob = try await world.matrixUser("bob")
        let muc = world.muc("refusals")
        let romeo = try await world.xmppUser("bob")
        defer { romeo.close() }
        let nurse = try await world.xmppUser("carol")
        defer { nurse.close() }
        try await romeo.joinRoom(muc, nick: "Romeo")
        try await nurse.joinRoom(muc, nick: "Nurse")   // affiliation none
        let room = try await alice.createRoom(invite: [world.botUserID, bob.userID])
        try await bob.join(room)
        try await world.waitForBot(alice, in: room)

        try await bob.send("!isthmus link \(muc) Romeo", to: room)
        let refusal = try await world.botNotice(alice, in: room, containing: "Only members with power level")
        XCTAssertEqual(refusal.body, "Only members with power level 50 or more (enough to change the room's settings) may manage "
                       + "its bridge; you have 0.")
        try await bob.send("!isthmus unlink", to: room)
        _ = try await world.botNotice(alice, in: room, containing: "This room is not linked.")

        try await alice.send("!isthmus link \(muc) Nurse", to: room)
        _ = try await world.botNotice(alice, in: room, containing: "Not linked: Nurse is not an owner or admin of \(muc).")
        try await alice.send("!isthmus help", to: room)
        _ = try await world.botNotice(alice, in: room, containing: "!isthmus link MUC_JID OWNER_NICK — link this room")
        XCTAssertTrue(try world.links().isEmpty)
        // Nobody in the MUC was asked: the only chat messages before the sentinel are none.
        try romeo.sendGroupchat(to: muc, body: "sentinel")
        var received: [Message] = []
        while received.last?.body != "sentinel" {
            received.append(try await nurse.nextMessage(within: 10, "up to the sentinel") { $0.body != nil })
        }
        XCTAssertEqual(received.filter { $0.type == .chat }.count, 0, "\(received.map(\.body))")
    }

    func testNoAnswerInTimeOrANoLinksNothing() async throws {
        let world = try EndToEndHarness("self-service-timeout")
        try world.editConfig { $0 + "\nprovisioning:\n  consent_timeout_seconds: 3\n" }
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("timeout")
        let romeo = try await world.xmppUser("bob")
        defer { romeo.close() }
        try await romeo.joinRoom(muc, nick: "Romeo")
        let room = try await alice.createRoom(invite: [world.botUserID])
        try await world.waitForBot(alice, in: room)

        try await alice.send("!isthmus link \(muc) Romeo", to: room)
        let question = try await world.privateMessage(to: romeo, from: muc)
        XCTAssertTrue(question.body?.contains("Reply yes within 3 seconds") == true, "\(question.body ?? "-")")
        _ = try await world.botNotice(alice, in: room, containing: "Not linked: Romeo did not answer within 3 seconds.")
        let expired = try await world.privateMessage(to: romeo, from: muc)
        XCTAssertEqual(expired.body, "The request to bridge this room with (a room without a name or public address) expired.")
        // A late yes changes nothing.
        try romeo.send(.message(Message(type: .chat, to: muc.with(resource: "Matrix")!, body: "yes")))

        try await alice.send("!isthmus link \(muc) Romeo", to: room)
        _ = try await world.privateMessage(to: romeo, from: muc)
        try romeo.send(.message(Message(type: .chat, to: muc.with(resource: "Matrix")!, body: "no")))
        _ = try await world.botNotice(alice, in: room, containing: "Not linked: Romeo did not allow it.")
        try await alice.send("!isthmus status", to: room)
        _ = try await world.botNotice(alice, in: room, containing: "This room is not linked.")
        XCTAssertTrue(try world.links().isEmpty)
    }

    func testTurnedOffTheCommandsRefuseToLinkButStillAnswer() async throws {
        let world = try EndToEndHarness("self-service-off")
        try world.editConfig { $0 + "\nprovisioning:\n  self_service: false\n" }
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("off")
        let room = try await world.linkedRoom(owner: alice, muc: muc)   // the administrator's way still works
        try await alice.send("!isthmus unlink", to: room)
        _ = try await world.botNotice(alice, in: room, containing: "Self-service linking is turned off on this bridge")
        try await alice.send("!isthmus status", to: room)
        _ = try await world.botNotice(alice, in: room, containing: "This room is linked with \(muc): active.")
        XCTAssertEqual(try world.links().map { $0["muc"] }, [muc.description])
    }

    func testTheBotLeavesAnInvitedRoomWithNothingLinkedEvenAcrossARestart() async throws {
        let world = try EndToEndHarness("self-service-invite")
        try world.editConfig { $0 + "\nprovisioning:\n  invite_timeout_seconds: 8\n" }
        try await world.startBridge()
        let alice = try await world.matrixUser("alice")
        let room = try await alice.createRoom(invite: [world.botUserID])
        try await world.waitForBot(alice, in: room)
        world.stopBridge()
        try await world.startBridge()
        defer { world.stopBridge() }
        // Still there after the restart (else this test would prove nothing about the restart: raise the timeout)…
        let early = try await alice.messages(in: room)
        let members = try await alice.members(of: room)
        XCTAssertTrue(members.keys.contains(world.botUserID), "the bot left before the restart")
        XCTAssertFalse(early.contains { $0.sender == world.botUserID }, "\(early)")
        // …and the new process remembers the deadline.
        _ = try await world.botNotice(alice, in: room, containing: "Nothing was linked within 8 seconds, so I am leaving.", timeout: 30)
        try await eventually("bot left", timeout: 20) { try await alice.members(of: room)[world.botUserID] == nil }
    }
}

extension EndToEndHarness {
    /// The bot's `m.notice` in `room` whose body contains `text`, once there is one.
    func botNotice(_ user: MatrixTestUser, in room: String, containing text: String, timeout: Double = 20) async throws
        -> MatrixTestUser.Event {
        try await eventuallyValue("bot notice containing \(text.debugDescription)", timeout: timeout, pollEvery: .milliseconds(100)) {
            try await user.messages(in: room).first {
                $0.sender == self.botUserID && $0.msgtype == "m.notice" && $0.body?.contains(text) == true
            }
        }
    }

    /// Waits until the bot has joined `room` (it does on invitation).
    func waitForBot(_ user: MatrixTestUser, in room: String) async throws {
        try await eventually("bot joined \(room)", timeout: 20, pollEvery: .milliseconds(100)) {
            try await user.members(of: room)[self.botUserID] != nil
        }
    }

    /// The next MUC private message to `client` from the bridge's occupant in `muc`.
    func privateMessage(to client: XMPPTestClient, from muc: JID, timeout: Double = 15) async throws -> Message {
        let bridge = muc.bare.with(resource: "Matrix")!
        return try await client.nextMessage(within: timeout, "private message from \(bridge)") {
            $0.type == .chat && $0.from == bridge && $0.body != nil
        }
    }
}
