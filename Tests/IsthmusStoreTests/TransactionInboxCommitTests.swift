import IsthmusCommon
@testable import IsthmusStore
import Testing

/// A homeserver transaction's inbox entries and its "processed" record are one commit: both, or neither.
@Suite struct TransactionInboxCommitTests {
    let room = RoomID("!room:localhost")!
    let transaction = TransactionID("txn-1")!

    func event(_ name: String) -> (room: RoomID, eventID: EventID, payload: [UInt8]) {
        (room, EventID("$\(name)")!, Array(name.utf8))
    }

    /// Makes every insert into `table` that matches `condition` fail inside its transaction.
    func failInserts(into table: String, when condition: String, in store: Store) async throws {
        try await store.write { db in
            try db.execute("""
                CREATE TRIGGER injected_failure BEFORE INSERT ON \(table) WHEN \(condition)
                BEGIN SELECT RAISE(ABORT, 'injected failure'); END;
                """)
        }
    }

    @Test func aSuccessfulCallLeavesTheEntriesAndTheRecord() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        let added = try await store.enqueueInbox([event("a"), event("b")], markingProcessed: transaction)
        #expect(added.map(\.eventID.rawValue) == ["$a", "$b"])
        #expect(try await store.isTransactionProcessed(transaction))
        #expect(try await store.inbox(room).map(\.eventID.rawValue) == ["$a", "$b"])
        // The same transaction again (a handler that did not check first) adds nothing and stays recorded.
        #expect(try await store.enqueueInbox([event("a"), event("b")], markingProcessed: transaction).isEmpty)
        #expect(try await store.inbox(room).count == 2)
    }

    @Test func anInboxInsertFailingMidwayLeavesNeitherEntriesNorRecord() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        try await failInserts(into: "matrix_inbox", when: "NEW.event_id = '$b'", in: store)
        await #expect(throws: SQLiteError.self) {
            try await store.enqueueInbox([event("a"), event("b"), event("c")], markingProcessed: transaction)
        }
        #expect(try await !store.isTransactionProcessed(transaction))
        #expect(try await store.inbox(room).isEmpty)   // `$a` was inserted before the failure, and rolled back
    }

    @Test func failingToRecordTheTransactionLeavesNoEntries() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        try await failInserts(into: "appservice_transactions", when: "1", in: store)
        await #expect(throws: SQLiteError.self) {
            try await store.enqueueInbox([event("a"), event("b")], markingProcessed: transaction)
        }
        #expect(try await !store.isTransactionProcessed(transaction))
        #expect(try await store.inbox(room).isEmpty)
    }

    @Test func afterAFailureTheRetryCommitsBoth() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        try await failInserts(into: "matrix_inbox", when: "NEW.event_id = '$b'", in: store)
        _ = try? await store.enqueueInbox([event("a"), event("b")], markingProcessed: transaction)
        try await store.write { db in try db.execute("DROP TRIGGER injected_failure") }
        let added = try await store.enqueueInbox([event("a"), event("b")], markingProcessed: transaction)
        #expect(added.map(\.eventID.rawValue) == ["$a", "$b"])
        #expect(try await store.isTransactionProcessed(transaction))
    }
}
