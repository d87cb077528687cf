import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// The store's PostgreSQL goes away under a running bridge and comes back: the bridge keeps running, and what was said
/// on either side meanwhile arrives once, in order. Always on PostgreSQL (the scenario makes its own database), in the
/// SQLite pass too: an outage of the database server is what only this backend has.
final class PostgresOutageTests: XCTestCase {
    func testPostgreSQLRestartUnderARunningBridgeLosesNothing() async throws {
        let world = try EndToEndHarness("pg-outage", database: .postgres)
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("pgoutage")
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        try romeo.sendGroupchat(to: muc, body: "x before")
        try await alice.send("m before", to: room)
        _ = try await world.matrixMessages(alice, in: room, untilBody: "x before", excluding: alice.userID)
        _ = try await world.xmppMessages(romeo, from: muc, untilBody: "m before", excludingNick: "Romeo")

        // A fast shutdown ends every session; the messages below meet a store that cannot be reached.
        try world.bed.kill(.postgres)
        try romeo.sendGroupchat(to: muc, body: "x during")
        try await alice.send("m during", to: room)
        let bridge = try XCTUnwrap(world.bridge)
        try await eventually("serve found the store out of reach (log: \(bridge.logFile.path))", timeout: 30) {
            bridge.log.contains("The store cannot be reached")
        }
        try world.bed.startOne(.postgres)

        try romeo.sendGroupchat(to: muc, body: "x after")
        try await alice.send("m after", to: room)
        let inMatrix = try await world.matrixMessages(alice, in: room, untilBody: "x after", excluding: alice.userID, timeout: 60)
        let inXMPP = try await world.xmppMessages(romeo, from: muc, untilBody: "m after", excludingNick: "Romeo", timeout: 60)
        // Sentinels, sent after both arrived, come after any doubled copy (per-room order holds).
        try await alice.send("sentinel from matrix", to: room)
        try romeo.sendGroupchat(to: muc, body: "sentinel from xmpp")
        let lateInXMPP = try await world.xmppMessages(romeo, from: muc, untilBody: "sentinel from matrix", excludingNick: "Romeo")
        let allInMatrix = try await world.matrixMessages(alice, in: room, untilBody: "sentinel from xmpp", excluding: alice.userID)
        XCTAssertEqual(allInMatrix.map(\.body), ["x before", "x during", "x after", "sentinel from xmpp"],
                       "XMPP → Matrix across the outage (first look: \(inMatrix.map(\.body)))")
        XCTAssertEqual((inXMPP + lateInXMPP).map(\.body), ["m during", "m after", "sentinel from matrix"],
                       "Matrix → XMPP across the outage")
        XCTAssertTrue(bridge.log.contains("The store can write again"), "serve noticed the store back")
        XCTAssertTrue(bridge.isRunning, "serve kept running")
        romeo.close()
    }
}
