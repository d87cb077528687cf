import Bridge
import Foundation
import IsthmusCommon
@testable import IsthmusStore
import Matrix
import MatrixAppService
import Testing

/// The bridge's appservice handler records a transaction as processed in the same commit as its inbox entries,
/// alone when nothing in it is kept, and not at all when the commit fails.
@Suite struct BridgeAppServiceHandlerTests {
    let linkedRoom = RoomID("!linked:localhost")!

    func handler(_ store: Store) -> BridgeAppServiceHandler {
        let bridge = Bridge(store: store, xmpp: FakeXMPPLink(), matrix: FakeMatrixLink(),
                            naming: BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!, logger: .disabled)
        return BridgeAppServiceHandler(bridge: bridge, namespace: GhostNamespace(prefix: "_xmpp_", serverName: "localhost", botLocalpart: "isthmus")!,
                                       logger: .disabled)
    }

    func linkedStore() async throws -> Store {
        let store = try Store(path: ":memory:", logger: .disabled)
        try await store.insertRoomLink(RoomLink(matrixRoom: linkedRoom, matrixAlias: nil, muc: JID("lounge@conference.localhost")!))
        return store
    }

    /// A transaction `id` with one message, `$<id>`, in `room`.
    func transaction(_ id: String, in room: RoomID) throws -> Transaction {
        let body = #"{"events": [{"type": "m.room.message", "event_id": "$\#(id)", "room_id": "\#(room.rawValue)", "sender": "@alice:localhost", "origin_server_ts": 1, "content": {"msgtype": "m.text", "body": "hi"}}]}"#
        return try TransactionDecoder.decode(Data(body.utf8), id: #require(TransactionID(id))).get()
    }

    @Test func aLinkedRoomsEventIsQueuedAndTheTransactionRecorded() async throws {
        let store = try await linkedStore()
        try await handler(store).handle(transaction("t1", in: linkedRoom))
        #expect(try await store.isTransactionProcessed(TransactionID("t1")!))
        #expect(try await store.inbox(linkedRoom).map(\.eventID.rawValue) == ["$t1"])
    }

    @Test func aTransactionWithNothingToKeepIsStillRecorded() async throws {
        let store = try await linkedStore()
        try await handler(store).handle(transaction("t2", in: RoomID("!unlinked:localhost")!))
        try await handler(store).handle(Transaction(id: TransactionID("t3")!, events: []))
        #expect(try await store.isTransactionProcessed(TransactionID("t2")!))
        #expect(try await store.isTransactionProcessed(TransactionID("t3")!))
        #expect(try await store.inbox(RoomID("!unlinked:localhost")!).isEmpty)
    }

    @Test func aFailedInboxWriteRecordsNothing() async throws {
        let store = try await linkedStore()
        try await store.write { db in
            try db.execute("""
                CREATE TRIGGER injected_failure BEFORE INSERT ON matrix_inbox
                BEGIN SELECT RAISE(ABORT, 'injected failure'); END;
                """)
        }
        await #expect(throws: StoreError.self) { try await handler(store).handle(transaction("t4", in: linkedRoom)) }
        #expect(try await !store.isTransactionProcessed(TransactionID("t4")!))
        #expect(try await store.inbox(linkedRoom).isEmpty)
    }
}
