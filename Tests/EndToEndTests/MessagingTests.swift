import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// Messages both ways through real Prosody and Synapse, driven through the CLI and `isthmus serve`.
final class MessagingTests: XCTestCase {
    /// Bodies that must arrive byte for byte.
    static let bodies = [
        "plain text", "  leading and trailing spaces  ", "line one\nline two\n\nline four", "emoji 😀🎉 and ünïcödé 中文",
        "markup-ish <b>bold</b> & &amp; 'quotes' \"double\"", "tab\there", "ends with a newline\n",
    ]

    func testTextBothWaysByteExactOnceWithGhostsAndPuppetsNamed() async throws {
        let world = try EndToEndHarness("text")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("text")
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        try await alice.setDisplayname("Alice Liddell", in: room)

        // Matrix → XMPP: alice's puppet occupant, named after her displayname, says each body exactly.
        for body in Self.bodies { try await alice.send(body, to: room) }
        try await alice.send("waves", to: room, msgtype: "m.emote")
        let received = try await world.xmppMessages(romeo, from: muc, count: Self.bodies.count + 1, excludingNick: "Romeo")
        XCTAssertEqual(received.map(\.body), Self.bodies + ["/me waves"])
        XCTAssertEqual(Set(received.compactMap { $0.from?.resource }), ["Alice Liddell"])
        XCTAssertTrue(received.allSatisfy { $0.stanzaIDs.contains { $0.by == muc } }, "the room assigns stanza-ids")

        // XMPP → Matrix: Romeo's ghost, named Romeo, says each body exactly.
        for body in Self.bodies { try romeo.sendGroupchat(to: muc, body: body) }
        try romeo.sendGroupchat(to: muc, body: "/me bows")
        let fromXMPP = try await world.matrixMessages(alice, in: room, count: Self.bodies.count + 1, excluding: alice.userID)
        XCTAssertEqual(fromXMPP.map(\.body), Self.bodies + ["bows"])
        XCTAssertEqual(fromXMPP.last?.msgtype, "m.emote")
        let ghosts = Set(fromXMPP.map(\.sender))
        XCTAssertEqual(ghosts.count, 1)
        let ghost = try XCTUnwrap(ghosts.first)
        XCTAssertTrue(ghost.hasPrefix("@_xmpp_"), ghost)
        let members = try await alice.members(of: room)
        XCTAssertEqual(members[ghost] ?? nil, "Romeo")

        // Nothing echoed, nothing doubled. A sentinel each way, sent after everything else, arrives after anything
        // doubled or echoed (per-room order holds), so once it is in, the counts can show it.
        try await alice.send("sentinel from matrix", to: room)
        let lateInXMPP = try await world.xmppMessages(romeo, from: muc, untilBody: "sentinel from matrix", excludingNick: "Romeo")
        XCTAssertEqual(lateInXMPP.map(\.body), ["sentinel from matrix"], "Romeo got a doubled message or an echo of his own")
        try romeo.sendGroupchat(to: muc, body: "sentinel from xmpp")
        let all = try await world.matrixMessages(alice, in: room, untilBody: "sentinel from xmpp")
        // alice sees only her own messages and Romeo's, each once, and the two sentinels.
        XCTAssertEqual(all.count, 2 * (Self.bodies.count + 1) + 2, all.map(\.description).joined(separator: "\n"))
        romeo.close()
    }

    func testBurstsBothWaysAtOnceArriveOnceInOrder() async throws {
        let world = try EndToEndHarness("burst")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("burst")
        let juliet = try await world.xmppUser("carol")
        try await juliet.joinRoom(muc, nick: "Juliet")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        let count = 30
        async let fromMatrix: Void = {
            for index in 0..<count { try await alice.send("m\(index)", to: room) }
        }()
        for index in 0..<count { try juliet.sendGroupchat(to: muc, body: "x\(index)") }
        try await fromMatrix
        // A sentinel after each burst: anything duplicated or reordered would arrive before it (per-room order holds),
        // and everything up to it is read.
        try await alice.send("end-of-matrix-burst", to: room)
        try juliet.sendGroupchat(to: muc, body: "end-of-xmpp-burst")
        let inXMPP = try await world.xmppMessages(juliet, from: muc, untilBody: "end-of-matrix-burst", excludingNick: "Juliet")
        XCTAssertEqual(inXMPP.map(\.body), (0..<count).map { "m\($0)" } + ["end-of-matrix-burst"])
        let inMatrix = try await world.matrixMessages(alice, in: room, untilBody: "end-of-xmpp-burst", excluding: alice.userID)
        XCTAssertEqual(inMatrix.map(\.body), (0..<count).map { "x\($0)" } + ["end-of-xmpp-burst"])
        juliet.close()
    }
}
