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

    /// A crash mid-burst leaves the next start catching up (the homeserver retrying its backed-off transactions,
    /// the archive, resends); a SIGTERM then, with traffic in flight both ways, and a restart: every message arrives
    /// once and in order (the transactions retried into a later run must not overtake the ones queued before).
    func testSigtermWhileCatchingUpThenRestartDeliversEverythingOnceInOrder() async throws {
        let world = try EndToEndHarness("sigterm-catch-up")
        try await world.startBridge()
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("sigterm-catch-up")
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        var fromMatrix: [String] = [], fromXMPP: [String] = []
        /// Sends `count` messages each way, alternating; `midway` runs after the first third.
        func traffic(_ phase: String, count: Int = 9, midway: () -> Void = {}) async throws {
            for index in 0..<count {
                let m = "m-\(phase)-\(index)", x = "x-\(phase)-\(index)"
                try await alice.send(m, to: room)
                fromMatrix.append(m)
                try romeo.sendGroupchat(to: muc, body: x)
                fromXMPP.append(x)
                if index == count / 3 { midway() }
            }
        }
        try await traffic("crash") { world.crashBridge() }
        try await traffic("down")
        try await world.startBridge()
        // SIGTERM right after the start, a third into this phase: the rest goes while the bridge is down.
        try await traffic("catching-up") { world.stopBridge() }
        try await world.startBridge()
        defer { world.stopBridge() }
        // Sentinels, sent last: any doubled or late copy comes before them.
        try await alice.send("m-end", to: room)
        try romeo.sendGroupchat(to: muc, body: "x-end")
        let inMatrix = try await world.matrixMessages(alice, in: room, untilBody: "x-end", excluding: alice.userID, timeout: 120)
        XCTAssertEqual(inMatrix.map(\.body), fromXMPP + ["x-end"])
        let inXMPP = try await world.xmppMessages(romeo, from: muc, untilBody: "m-end", excludingNick: "Romeo", timeout: 120)
        XCTAssertEqual(inXMPP.map(\.body), fromMatrix + ["m-end"])
        romeo.close()
    }

    func testProsodyRestartUnderARunningBridgeRecoversAndCatchesUp() async throws {
        let world = try EndToEndHarness("prosody-restart")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("xmpprestart")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        try world.bed.restart(.xmpp)
        // Messages from Matrix while the link is re-established are queued and delivered.
        try await alice.send("during reconnect", to: room)
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        try await eventually("bridge rejoined", timeout: 60) { try world.links().first?["status"] == "active" }
        try romeo.sendGroupchat(to: muc, body: "after prosody restart")
        try await alice.send("matrix after prosody restart", to: room)
        _ = try await world.matrixMessages(alice, in: room, untilBody: "after prosody restart", excluding: alice.userID, timeout: 60)
        let inXMPP = try await world.xmppMessages(romeo, from: muc, untilBody: "matrix after prosody restart", excludingNick: "Romeo",
                                                  timeout: 60)
        // Each once: a sentinel each way, sent after both arrived, comes after any doubled copy (per-room order holds).
        try await alice.send("sentinel from matrix", to: room)
        try romeo.sendGroupchat(to: muc, body: "sentinel from xmpp")
        let lateInXMPP = try await world.xmppMessages(romeo, from: muc, untilBody: "sentinel from matrix", excludingNick: "Romeo")
        XCTAssertEqual(lateInXMPP.map(\.body), ["sentinel from matrix"], "a doubled message reached the MUC")
        // Romeo joined after "during reconnect" was sent: he sees it live at most once (or not, if it came before him).
        XCTAssertLessThanOrEqual(inXMPP.filter { $0.body == "during reconnect" }.count, 1, "\(inXMPP.map(\.body))")
        let inMatrix = try await world.matrixMessages(alice, in: room, untilBody: "sentinel from xmpp", excluding: alice.userID)
        XCTAssertEqual(inMatrix.map(\.body), ["after prosody restart", "sentinel from xmpp"])
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
        // No stray copy later either: a sentinel in every direction, sent once everything above arrived, comes after
        // anything the bridge put in the wrong room (per-room order holds).
        for room in [roomA, roomB] { try await alice.send("end", to: room) }
        for muc in [mucA, mucB] { try romeo.sendGroupchat(to: muc, body: "end") }
        for muc in [mucA, mucB] {
            let late = try await world.xmppMessages(romeo, from: muc, untilBody: "end", excludingNick: "Romeo")
            XCTAssertEqual(late.map(\.body), ["end"], "stray messages in \(muc)")
        }
        let allInRoomA = try await world.matrixMessages(alice, in: roomA, untilBody: "end", excluding: alice.userID)
        XCTAssertEqual(allInRoomA.map(\.body), ["from A", "end"])
        let allInRoomB = try await world.matrixMessages(alice, in: roomB, untilBody: "end", excluding: alice.userID)
        XCTAssertEqual(allInRoomB.map(\.body), ["from B", "end"])
        romeo.close()
    }
}
