import Bridge
import Foundation
import IsthmusCommon
@testable import IsthmusStore
import Testing
import TestSupport

/// A full disk (the store's connection limited with `PRAGMA max_page_count`): the bridge refuses homeserver
/// transactions (the homeserver retries them), takes nothing more from XMPP, and once the store can grow again every
/// message arrives exactly once, in order, by itself.
@Suite struct DiskFullTests {
    let room = RoomID("!full:localhost")!
    let muc = JID("full@conference.localhost")!
    let alice = UserID("@alice:localhost")!

    @Test func nothingIsLostOrDoubledAndTheBridgeResumesByItself() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.path("isthmus.sqlite"), logger: .disabled)
        let gated = try await GatedBridge.start(store: store, room: room, muc: muc, members: [alice: "Alice"], probeInterval: .milliseconds(20))
        let (xmpp, matrix, sink, bridge) = (gated.xmpp, gated.matrix, gated.sink, gated.bridge)

        try await fill(store)
        let count = 150   // enough records to outgrow the room left in the tables' last pages
        var stanzaIDs = (1...count - 10).compactMap { xmpp.occupantSays("romeo", "from xmpp \($0)", in: muc).stanzaID }
        // The XMPP side finds the disk full first: a message sent to Matrix whose record fails must be recorded once
        // the store can write again (not sent twice, not forgotten so that catch-up would send it again).
        try await eventually("the XMPP side found the disk full") {
            sink.records.contains { $0.message.hasPrefix("The disk is full") }
        }
        // What comes from XMPP now is not taken: reading pauses until the store can write again.
        stanzaIDs += (count - 9...count).compactMap { xmpp.occupantSays("romeo", "from xmpp \($0)", in: muc).stanzaID }
        try await eventually("XMPP reading paused") { xmpp.state.withLock { $0.readingPaused } == [true] }
        var refused: [(MatrixRoomEvent, TransactionID)] = []
        for index in 1...count {
            let event = MatrixRoomEvent(eventID: EventID("$m\(index)")!, room: room, sender: alice,
                                        content: .message(msgtype: .text, body: "from matrix \(index)|" + String(repeating: ".", count: 300)))
            let transaction = TransactionID("t\(index)")!
            do {
                try await bridge.acceptMatrixEvents([event], transaction: transaction)
            } catch {
                refused.append((event, transaction))   // answered 500: the homeserver keeps it and retries
            }
        }
        #expect(!refused.isEmpty, "the store never filled up")
        #expect(matrix.state.withLock { $0.sent.count } < count, "XMPP messages went on while the disk was full")

        try await store.read { db in try db.execute("PRAGMA max_page_count = 1073741823") }
        for (event, transaction) in refused {   // the homeserver's retries, in order, until one is accepted
            try await eventually("transaction \(transaction.rawValue) accepted") {
                (try? await bridge.acceptMatrixEvents([event], transaction: transaction)) != nil
            }
        }

        let toMatrix = try await eventuallyValue("\(count) messages in Matrix") {
            let bodies = matrix.state.withLock { $0.sent.map(\.message.body) }
            return bodies.count >= count ? bodies : nil
        }
        let toXMPP = try await eventuallyValue("\(count) messages in XMPP") {
            let bodies = xmpp.state.withLock { $0.sent.map(\.body) }
            return bodies.count >= count ? bodies : nil
        }
        #expect(toMatrix == (1...count).map { "from xmpp \($0)" })
        for stanzaID in stanzaIDs {   // every message sent to Matrix is in the message map (none forgotten)
            try await eventually("\(stanzaID.rawValue) recorded") { try await store.mapping(room: room, stanzaID: stanzaID) != nil }
        }
        #expect(toXMPP.map { $0.prefix(while: { $0 != "|" }) } == (1...count).map { "from matrix \($0)" })
        let full = sink.records.filter { $0.message.hasPrefix("The disk is full") }
        #expect(full.count == 1, "the full disk is logged once, not per message")
        #expect(sink.records.contains { $0.message.hasPrefix("The store can write again") })
        #expect(xmpp.state.withLock { $0.readingPaused } == [true, false], "XMPP reading paused while full, then resumed")

        await gated.stop()
        #expect(matrix.state.withLock { $0.sent.count } == count)
        #expect(xmpp.state.withLock { $0.sent.count } == count)

        // A restart catches up from the archive: every message recorded while the disk was full stays bridged once.
        let again = FakeXMPPLink()
        let carried = xmpp.state.withLock { ($0.archive, $0.nextStanza, $0.occupantNicks) }
        again.state.withLock { $0.archive = carried.0; $0.nextStanza = carried.1; $0.occupantNicks = carried.2 }
        let restarted = Bridge(store: store, xmpp: again, matrix: matrix,
                               naming: BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!,
                               logger: .disabled, linkPollInterval: .milliseconds(20))
        let againEvents = again.events
        let secondTask = Task { await restarted.run(xmppEvents: againEvents) }
        again.feed.yield(.connected(reconnected: false))
        _ = again.occupantSays("romeo", "after the restart", in: muc)
        let afterRestart = try await eventuallyValue("the message after the restart in Matrix") {
            let bodies = matrix.state.withLock { $0.sent.map(\.message.body) }
            return bodies.last == "after the restart" ? bodies : nil
        }
        #expect(afterRestart == (1...count).map { "from xmpp \($0)" } + ["after the restart"])
        #expect(again.state.withLock { $0.sent.count } == 0, "a Matrix message was sent again after the restart")
        restarted.shutdown()
        again.feed.finish()
        await secondTask.value
    }

    /// Fills the store: a page limit just above its size, then filler rows until SQLITE_FULL.
    private func fill(_ store: Store) async throws {
        try await store.read { db in
            try db.execute("CREATE TABLE test_filler (filler BLOB)")
            let pages = try db.query("PRAGMA page_count") { $0.int(0) ?? 0 }.first ?? 0
            try db.execute("PRAGMA max_page_count = \(pages + 16)")
            for size in [2000, 200, 20] {
                while true {
                    do {
                        try db.execute("INSERT INTO test_filler VALUES (zeroblob(\(size)))")
                    } catch let error as StoreError where error.isDiskFull {
                        break
                    }
                }
            }
        }
    }
}
