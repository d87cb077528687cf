import Bridge
import Foundation
import IsthmusCommon
@testable import IsthmusStore
import Testing
import TestSupport

/// SQLite's form of an unreachable store: another process holds the write lock past the busy timeout (5 s), so the
/// bridge's write fails as ``StoreError/Kind/unavailable``. The room waits at that write (the store's write gate, as
/// for a full disk or a PostgreSQL outage) instead of giving it up, and once the lock is let go the message is bridged
/// and recorded once — so neither a later message nor a restart sends it again.
@Suite struct StoreLockedTests {
    let room = RoomID("!locked:localhost")!
    let muc = JID("locked@conference.localhost")!

    @Test func aWriteThatMeetsALockedStoreWaitsAndIsMadeOnceTheLockGoes() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("isthmus.sqlite")
        let store = try Store(path: path, logger: .disabled)
        let gated = try await GatedBridge.start(store: store, room: room, muc: muc, probeInterval: .milliseconds(50))
        let (xmpp, matrix, sink) = (gated.xmpp, gated.matrix, gated.sink)

        // Another process (here: another connection) takes the write lock and keeps it.
        let other = try Store(path: path, logger: .disabled)
        try await other.read { db in try db.execute("BEGIN IMMEDIATE") }
        let message = xmpp.occupantSays("romeo", "while locked", in: muc)
        let stanzaID = try #require(message.stanzaID)
        try await eventually("the record met the lock", timeout: 30) {
            sink.records.contains { $0.message.hasPrefix("The store cannot be reached") }
        }
        try await other.read { db in try db.execute("COMMIT") }

        try await eventually("the message recorded once the lock went", timeout: 30) {
            try await store.mapping(room: room, stanzaID: stanzaID) != nil
        }
        _ = xmpp.occupantSays("romeo", "after the lock", in: muc)   // a sentinel: anything doubled comes before it
        let sent = try await eventuallyValue("the sentinel in Matrix") {
            let bodies = matrix.state.withLock { $0.sent.map(\.message.body) }
            return bodies.last == "after the lock" ? bodies : nil
        }
        #expect(sent == ["while locked", "after the lock"])
        #expect(sink.records.contains { $0.message.hasPrefix("The store can write again") })
        #expect(!sink.records.contains { $0.message.hasPrefix("Could not record a bridged message") })
        await gated.stop()
    }
}
