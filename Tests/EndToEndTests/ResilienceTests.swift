import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// Exactly once across restarts, crashes and XMPP server restarts; isolation between links.
final class ResilienceTests: XCTestCase {
    func testMessagesSentWhileTheBridgeIsDownAreDeliveredOnceAfterRestart() async throws {
        let world = try EndToEndHarness("restart")
        try await world.startBridge()
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("restart")
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        try romeo.sendGroupchat(to: muc, body: "before")
        _ = try await world.matrixMessages(alice, in: room, count: 1, excluding: alice.userID)
        let ghostsBefore = try await alice.members(of: room)

        world.stopBridge()
        for index in 0..<5 { try romeo.sendGroupchat(to: muc, body: "xmpp while down \(index)") }
        for index in 0..<5 { try await alice.send("matrix while down \(index)", to: room) }
        try await world.startBridge()
        defer { world.stopBridge() }
        try await alice.send("matrix after restart", to: room)
        try romeo.sendGroupchat(to: muc, body: "xmpp after restart")

        let inMatrix = try await world.matrixMessages(alice, in: room, count: 7, excluding: alice.userID)
        XCTAssertEqual(inMatrix.map(\.body), ["before"] + (0..<5).map { "xmpp while down \($0)" } + ["xmpp after restart"])
        let inXMPP = try await world.xmppMessages(romeo, from: muc, count: 6, excludingNick: "Romeo")
        XCTAssertEqual(inXMPP.map(\.body), (0..<5).map { "matrix while down \($0)" } + ["matrix after restart"])
        // Ghosts stayed joined through the restart (no leave/join churn on Matrix).
        let membershipEvents = try await alice.timeline(of: room).filter { $0.type == "m.room.member" && $0.content["membership"] == "leave" }
        XCTAssertEqual(membershipEvents.count, 0, membershipEvents.map(\.description).joined(separator: "\n"))
        let ghostsAfter = try await alice.members(of: room)
        XCTAssertEqual(Set(ghostsBefore.keys), Set(ghostsAfter.keys))
        romeo.close()
    }

    func testKillNineMidTwoWayBurstThenRestartDeliversEverythingOnce() async throws {
        let world = try EndToEndHarness("kill9")
        try await world.startBridge()
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("kill9")
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        let count = 30
        async let fromMatrix: Void = {
            for index in 0..<count { try await alice.send("m\(index)", to: room) }
        }()
        for index in 0..<count {
            try romeo.sendGroupchat(to: muc, body: "x\(index)")
            if index == count / 3 { world.crashBridge() }
        }
        try await fromMatrix
        try await world.startBridge()
        defer { world.stopBridge() }
        try await alice.send("m-end", to: room)
        try romeo.sendGroupchat(to: muc, body: "x-end")
        let inMatrix = try await world.matrixMessages(alice, in: room, count: count + 1, excluding: alice.userID, timeout: 60)
        XCTAssertEqual(inMatrix.map(\.body), (0..<count).map { "x\($0)" } + ["x-end"])
        let inXMPP = try await world.xmppMessages(romeo, from: muc, count: count + 1, excludingNick: "Romeo", timeout: 60)
        XCTAssertEqual(inXMPP.map(\.body), (0..<count).map { "m\($0)" } + ["m-end"])
        romeo.close()
    }

    func testProsodyRestartUnderARunningBridgeRecoversAndCatchesUp() async throws {
        let world = try EndToEndHarness("prosody-restart")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("xmpprestart")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        try world.bed.restart(.prosody)
        // Messages from Matrix while the link is re-established are queued and delivered.
        try await alice.send("during reconnect", to: room)
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        try await eventually("bridge rejoined", timeout: 60) { try world.links().first?["status"] == "active" }
        try romeo.sendGroupchat(to: muc, body: "after prosody restart")
        try await alice.send("matrix after prosody restart", to: room)
        let inMatrix = try await world.matrixMessages(alice, in: room, count: 1, excluding: alice.userID, timeout: 60)
        XCTAssertEqual(inMatrix.map(\.body), ["after prosody restart"])
        var bodies: [String?] = []
        while bodies.last != "matrix after prosody restart" {
            bodies.append(try await world.xmppMessages(romeo, from: muc, count: 1, excludingNick: "Romeo", timeout: 60).first?.body)
        }
        XCTAssertEqual(bodies.filter { $0 == "matrix after prosody restart" }.count, 1)
        romeo.close()
    }

    func testSynapseOutageUnderARunningBridgeDelaysButLosesNothing() async throws {
        let world = try EndToEndHarness("synapse-outage")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("hsoutage")
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        try romeo.sendGroupchat(to: muc, body: "before the outage")
        _ = try await world.matrixMessages(alice, in: room, count: 1, excluding: alice.userID)

        try world.bed.kill(.synapse)
        for index in 0..<3 { try romeo.sendGroupchat(to: muc, body: "during the outage \(index)") }
        try world.bed.startOne(.synapse)
        try romeo.sendGroupchat(to: muc, body: "after the outage")
        let bodies = try await world.matrixMessages(alice, in: room, count: 5, excluding: alice.userID, timeout: 90).map(\.body)
        XCTAssertEqual(bodies, ["before the outage"] + (0..<3).map { "during the outage \($0)" } + ["after the outage"])
        romeo.close()
    }

    func testTwoLinkedPairsDoNotCrossTalk() async throws {
        let world = try EndToEndHarness("two-pairs")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let mucA = world.muc("paira"), mucB = world.muc("pairb")
        let roomA = try await world.linkedRoom(owner: alice, muc: mucA)
        let roomB = try await world.linkedRoom(owner: alice, muc: mucB)
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(mucA, nick: "Romeo")
        try await romeo.joinRoom(mucB, nick: "Romeo")
        try await alice.send("to A", to: roomA)
        try await alice.send("to B", to: roomB)
        try romeo.sendGroupchat(to: mucA, body: "from A")
        try romeo.sendGroupchat(to: mucB, body: "from B")
        let inA = try await world.xmppMessages(romeo, from: mucA, count: 1, excludingNick: "Romeo").map(\.body)
        let inB = try await world.xmppMessages(romeo, from: mucB, count: 1, excludingNick: "Romeo").map(\.body)
        let inRoomA = try await world.matrixMessages(alice, in: roomA, count: 1, excluding: alice.userID).map(\.body)
        let inRoomB = try await world.matrixMessages(alice, in: roomB, count: 1, excluding: alice.userID).map(\.body)
        XCTAssertEqual(inA, ["to A"])
        XCTAssertEqual(inB, ["to B"])
        XCTAssertEqual(inRoomA, ["from A"])
        XCTAssertEqual(inRoomB, ["from B"])
        romeo.close()
    }
}
