import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// The admin CLI for links against real servers: link by id and alias, refusals, unlink, changes applied live.
final class LinkingTests: XCTestCase {
    func testLinkByIDWhileServeIsDownThenServeActivatesIt() async throws {
        let world = try EndToEndHarness("link-id")
        let alice = try await world.matrixUser("alice")
        let room = try await alice.createRoom(invite: [world.botUserID])
        let muc = world.muc("byid")
        let linked = try world.cli("link", room, muc.description)
        XCTAssertEqual(linked.status, 0, linked.stderr)
        XCTAssertEqual(try world.links().first?["status"], "pending")
        XCTAssertEqual(try world.cli("links").stdout, "\(room) \(muc) pending\n")
        // `doctor` reads the store the config names: the file, or on a PostgreSQL run the scenario's database, which
        // `link` has just migrated.
        let doctor = try world.cli("doctor")
        let storeLine = doctor.stdout.split(separator: "\n").first { $0.contains(" store: ") }
        let backend = world.database.backend == .postgres ? ": connects, PostgreSQL " : ": SQLite "
        XCTAssertTrue(storeLine?.hasPrefix("ok") == true && storeLine?.contains(backend) == true
                      && storeLine?.contains("migrations applied: none") == false,
                      "stdout:\n\(doctor.stdout)\nstderr:\n\(doctor.stderr)")
        try await world.startBridge()
        defer { world.stopBridge() }
        try await world.waitForLink(room, status: "active")
        // The MUC was created by the bridge's join (instant room) and the bot's occupant is in it.
        let observer = try await world.xmppUser("bob")
        try await observer.joinRoom(muc, nick: "Observer")
        let present = try await observer.nextPresence(within: 10, "the bridge's occupant") { $0.from?.resource == "Matrix" }
        XCTAssertEqual(present.type, .available)
        observer.close()
    }

    func testLinkRefusalsAreClearAndUsageErrorsExit64() async throws {
        let world = try EndToEndHarness("link-refusals")
        let alice = try await world.matrixUser("alice")
        let notInvited = try await alice.createRoom()
        let muc = world.muc("refusals")

        var result = try world.cli("link", notInvited, muc.description)
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("not invited"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)

        result = try world.cli("link", "#no-such-room-\(world.suffix):localhost", muc.description)
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("unknown room"), result.stderr)

        result = try world.cli("link", "not-a-room", muc.description)
        XCTAssertEqual(result.status, 64, result.stderr)
        result = try world.cli("link", notInvited, "not a jid")
        XCTAssertEqual(result.status, 64, result.stderr)
        result = try world.cli("link", notInvited)
        XCTAssertEqual(result.status, 64, result.stderr)

        let invited = try await alice.createRoom(aliasLocalpart: "refusals-\(world.suffix)", invite: [world.botUserID])
        XCTAssertEqual(try world.cli("link", invited, muc.description).status, 0)
        result = try world.cli("link", "#refusals-\(world.suffix):localhost", world.muc("other").description)
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("already linked"), result.stderr)
        let another = try await alice.createRoom(invite: [world.botUserID])
        result = try world.cli("link", another, muc.description)
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("already linked"), result.stderr)

        result = try world.cli("unlink", world.muc("never").description)
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("not linked"), result.stderr)
        let json = try world.links()
        XCTAssertEqual(json.count, 1)
        XCTAssertEqual(json.first?["matrix_room"], invited)
        XCTAssertEqual(json.first?["muc"], muc.description)
    }

    func testLinkAndUnlinkAppliedToRunningService() async throws {
        let world = try EndToEndHarness("unlink")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("unlink")
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let room = try await world.linkedRoom(owner: alice, muc: muc)   // linked by alias while serve runs
        XCTAssertEqual(try world.links().first?["matrix_alias"], "#room-\(world.suffix)-\(muc.localpart!):localhost")
        try romeo.sendGroupchat(to: muc, body: "before unlink")
        let bridged = try await world.matrixMessages(alice, in: room, count: 1, excluding: alice.userID)
        let ghost = try XCTUnwrap(bridged.first?.sender)

        let result = try world.cli("unlink", muc.description)
        XCTAssertEqual(result.status, 0, result.stderr)
        try await eventually("link gone") { try world.links().isEmpty }
        try await eventually("ghost and bot left the Matrix room") {
            let members = try await alice.members(of: room)
            return members[ghost] == nil && members[world.botUserID] == nil
        }
        // The bridge's occupant and alice's puppet left the MUC.
        var left: Set<String> = []
        while left != ["Matrix", "alice"] {
            let presence = try await romeo.nextPresence(within: 10, "occupants leaving") { $0.type == .unavailable }
            if let nick = presence.from?.resource { left.insert(nick) }
        }
        // Nothing more is bridged.
        try romeo.sendGroupchat(to: muc, body: "after unlink")
        try await alice.send("also after unlink", to: room)
        try romeo.sendGroupchat(to: muc, body: "sentinel")
        var seen: [Message] = []
        while seen.last?.body != "sentinel" {
            seen.append(try await romeo.nextMessage(within: 10, "messages up to the sentinel") { $0.type == .groupchat && $0.body != nil })
        }
        XCTAssertEqual(seen.compactMap { $0.from?.resource }.filter { $0 != "Romeo" }, [], "nothing from Matrix after unlink")
        let messages = try await alice.messages(in: room)
        XCTAssertEqual(messages.map(\.body), ["before unlink", "also after unlink"])
        romeo.close()
    }
}
