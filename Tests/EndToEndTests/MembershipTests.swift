import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// Joins, leaves, nick and displayname changes, both ways, through real servers.
final class MembershipTests: XCTestCase {
    func testXMPPOccupantsBecomeGhostsThatFollowJoinsNickChangesAndLeaves() async throws {
        let world = try EndToEndHarness("members-x")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("membersx")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let ghost = try await eventuallyValue("a ghost named Romeo joined") {
            try await alice.members(of: room).first(where: { $0.value == "Romeo" })?.key
        }
        XCTAssertTrue(ghost.hasPrefix("@_xmpp_"))
        // Nick change: same ghost, new per-room displayname.
        try romeo.send(.presence(Presence(to: muc.with(resource: "Romeo2")!)))
        try await eventually("ghost renamed") { try await alice.members(of: room)[ghost] == "Romeo2" }
        // Leave: the ghost leaves.
        try romeo.send(.presence(Presence(type: .unavailable, to: muc.with(resource: "Romeo2")!)))
        try await eventually("ghost left") { try await alice.members(of: room)[ghost] == nil }
        // Rejoin: the same ghost comes back (one occupant = one ghost).
        try await romeo.joinRoom(muc, nick: "Romeo")
        try await eventually("same ghost back") { try await alice.members(of: room)[ghost] == "Romeo" }
        romeo.close()
    }

    func testMatrixMembersBecomeOccupantsThatFollowJoinsRenamesAndLeaves() async throws {
        let world = try EndToEndHarness("members-m")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let bob = try await world.matrixUser("bob")
        let muc = world.muc("membersm")
        let juliet = try await world.xmppUser("carol")
        try await juliet.joinRoom(muc, nick: "Juliet")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        _ = try await juliet.nextPresence(within: 20, "alice's occupant") { $0.from?.resource == "alice" && $0.type == .available }

        try await alice.invite(bob.userID, to: room)
        try await bob.join(room)
        _ = try await juliet.nextPresence(within: 20, "bob's occupant") { $0.from?.resource == "bob" && $0.type == .available }
        try await bob.setDisplayname("Bobby", in: room)
        let renamed = try await juliet.nextPresence(within: 20, "bob's nick change") {
            $0.from?.resource == "bob" && $0.type == .unavailable && $0.statusCodes.contains(.nickChanged)
        }
        XCTAssertEqual(renamed.mucUser?.item?.nick, "Bobby")
        try await bob.leave(room)
        _ = try await juliet.nextPresence(within: 20, "bob's occupant leaves") { $0.from?.resource == "Bobby" && $0.type == .unavailable }
        juliet.close()
    }

    func testNickConflictTakesAnAlternativeAndLosesNoMessage() async throws {
        let world = try EndToEndHarness("conflict")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("conflict")
        let impostor = try await world.xmppUser("bob")
        try await impostor.joinRoom(muc, nick: "alice")   // an XMPP user already holds alice's name
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        try await alice.send("still delivered", to: room)
        let message = try await impostor.nextMessage(within: 20, "alice's message") { $0.body == "still delivered" }
        XCTAssertEqual(message.from?.resource, "alice (Matrix)")
        impostor.close()
    }
}
