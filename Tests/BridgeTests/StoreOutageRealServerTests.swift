import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing
import TestSupport

/// The store's PostgreSQL out of reach under a running bridge (its database refusing connections, every session
/// ended, as in a restart of the server): an XMPP message met by the outage waits instead of being dropped, XMPP
/// reading pauses, homeserver transactions are refused (the homeserver retries them), and once the database is back
/// every message arrives exactly once, in order, by itself. The end-to-end twin is `PostgresOutageTests`. Needs the
/// test bed's PostgreSQL (`scripts/test`): skipped without it (``needsTestBedPostgres``).
@Suite(.needsTestBedPostgres) struct StoreOutageRealServerTests {
    let room = RoomID("!outage:localhost")!
    let muc = JID("outage@conference.localhost")!
    let alice = UserID("@alice:localhost")!

    @Test func anUnreachableDatabaseLosesNothingAndTheBridgeResumesByItself() async throws {
        let fixture = try await StoreBackend.postgres.open()
        let store = fixture.store
        let database = try #require(fixture.postgresDatabase)
        let gated = try await GatedBridge.start(store: store, room: room, muc: muc, members: [alice: "Alice"], probeInterval: .milliseconds(50))
        let (xmpp, matrix, sink, bridge) = (gated.xmpp, gated.matrix, gated.sink, gated.bridge)
        _ = xmpp.occupantSays("romeo", "from xmpp 0", in: muc)
        try await bridge.acceptMatrixEvents([matrixMessage(0)], transaction: TransactionID("t0")!)
        try await eventually("the first message each way") {
            matrix.state.withLock { $0.sent.count } == 1 && xmpp.state.withLock { $0.sent.count } == 1
        }

        try database.runAsAdministrator("ALTER DATABASE \(database.name) ALLOW_CONNECTIONS false")
        try database.runAsAdministrator("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database.name)'")
        for index in 1...5 { _ = xmpp.occupantSays("romeo", "from xmpp \(index)", in: muc) }
        try await eventually("the XMPP side found the store out of reach") {
            sink.records.contains { $0.message.hasPrefix("The store cannot be reached") }
        }
        // What comes from XMPP now is not taken: reading pauses until the store can write again.
        _ = xmpp.occupantSays("romeo", "from xmpp 6", in: muc)
        try await eventually("XMPP reading paused") { xmpp.state.withLock { $0.readingPaused } == [true] }
        var refused: [(MatrixRoomEvent, TransactionID)] = []
        for index in 1...5 {
            let (event, transaction) = (matrixMessage(index), TransactionID("t\(index)")!)
            do {
                try await bridge.acceptMatrixEvents([event], transaction: transaction)
            } catch {
                refused.append((event, transaction))   // answered 500: the homeserver keeps it and retries
            }
        }
        #expect(refused.count == 5, "transactions are refused while the store is out of reach")

        try database.runAsAdministrator("ALTER DATABASE \(database.name) ALLOW_CONNECTIONS true")
        for (event, transaction) in refused {   // the homeserver's retries, in order, until one is accepted
            try await eventually("transaction \(transaction.rawValue) accepted") {
                (try? await bridge.acceptMatrixEvents([event], transaction: transaction)) != nil
            }
        }
        _ = xmpp.occupantSays("romeo", "from xmpp 7", in: muc)
        try await bridge.acceptMatrixEvents([matrixMessage(6)], transaction: TransactionID("t6")!)
        let toMatrix = try await eventuallyValue("the XMPP sentinel in Matrix") {
            let bodies = matrix.state.withLock { $0.sent.map(\.message.body) }
            return bodies.last == "from xmpp 7" ? bodies : nil
        }
        let toXMPP = try await eventuallyValue("the Matrix sentinel in XMPP") {
            let bodies = xmpp.state.withLock { $0.sent.map(\.body) }
            return bodies.last == "from matrix 6" ? bodies : nil
        }
        #expect(toMatrix == (0...7).map { "from xmpp \($0)" })
        #expect(toXMPP == (0...6).map { "from matrix \($0)" })
        #expect(sink.records.filter { $0.message.hasPrefix("The store cannot be reached") }.count == 1,
                "the outage is logged once, not per message")
        #expect(sink.records.contains { $0.message.hasPrefix("The store can write again") })
        #expect(xmpp.state.withLock { $0.readingPaused } == [true, false], "XMPP reading paused during the outage, then resumed")

        await gated.stop()
    }

    private func matrixMessage(_ index: Int) -> MatrixRoomEvent {
        MatrixRoomEvent(eventID: EventID("$m\(index)")!, room: room, sender: alice,
                        content: .message(msgtype: .text, body: "from matrix \(index)"))
    }
}
