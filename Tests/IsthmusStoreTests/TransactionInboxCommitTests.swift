import IsthmusCommon
@testable import IsthmusStore
import TestSupport
import Testing

/// A homeserver transaction's inbox entries and its "processed" record are one commit: both, or neither.
@Suite struct TransactionInboxCommitTests {
    let room = RoomID("!room:localhost")!
    let transaction = TransactionID("txn-1")!

    func event(_ name: String) -> (room: RoomID, eventID: EventID, payload: [UInt8]) {
        (room, EventID("$\(name)")!, Array(name.utf8))
    }

    /// Makes every insert into `table` that matches `condition` fail inside its transaction: the crash between two
    /// statements of one commit, as each backend can stage it (a trigger that raises).
    func failInserts(into table: String, when condition: String, in store: Store) async throws {
        try await store.write { db in
            switch db.dialect {
            case .sqlite:
                try db.execute("""
                    CREATE TRIGGER injected_failure BEFORE INSERT ON \(table) WHEN \(condition)
                    BEGIN SELECT RAISE(ABORT, 'injected failure'); END;
                    """)
            case .postgres:
                try db.execute("""
                    CREATE FUNCTION injected_failure() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN RAISE EXCEPTION 'injected failure'; END $$;
                    CREATE TRIGGER injected_failure BEFORE INSERT ON \(table) FOR EACH ROW WHEN (\(condition))
                    EXECUTE FUNCTION injected_failure();
                    """)
            }
        }
    }

    /// Removes ``failInserts(into:when:in:)``'s trigger.
    func stopFailing(_ table: String, in store: Store) async throws {
        try await store.write { db in
            switch db.dialect {
            case .sqlite: try db.execute("DROP TRIGGER injected_failure")
            case .postgres: try db.execute("DROP TRIGGER injected_failure ON \(table)")
            }
        }
    }

    @Test(arguments: StoreBackend.all) func aSuccessfulCallLeavesTheEntriesAndTheRecord(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        let added = try await store.enqueueInbox([event("a"), event("b")], markingProcessed: transaction)
        #expect(added.map(\.eventID.rawValue) == ["$a", "$b"])
        #expect(try await store.isTransactionProcessed(transaction))
        #expect(try await store.inbox(room).map(\.eventID.rawValue) == ["$a", "$b"])
        // The same transaction again (a handler that did not check first) adds nothing and stays recorded.
        #expect(try await store.enqueueInbox([event("a"), event("b")], markingProcessed: transaction).isEmpty)
        #expect(try await store.inbox(room).count == 2)
    }

    @Test(arguments: StoreBackend.all) func anInboxInsertFailingMidwayLeavesNeitherEntriesNorRecord(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        try await failInserts(into: "matrix_inbox", when: "NEW.event_id = '$b'", in: store)
        await #expect(throws: StoreError.self) {
            try await store.enqueueInbox([event("a"), event("b"), event("c")], markingProcessed: transaction)
        }
        #expect(try await !store.isTransactionProcessed(transaction))
        #expect(try await store.inbox(room).isEmpty)   // `$a` was inserted before the failure, and rolled back
    }

    @Test(arguments: StoreBackend.all) func failingToRecordTheTransactionLeavesNoEntries(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        try await failInserts(into: "appservice_transactions", when: "true", in: store)
        await #expect(throws: StoreError.self) {
            try await store.enqueueInbox([event("a"), event("b")], markingProcessed: transaction)
        }
        #expect(try await !store.isTransactionProcessed(transaction))
        #expect(try await store.inbox(room).isEmpty)
    }

    @Test(arguments: StoreBackend.all) func afterAFailureTheRetryCommitsBoth(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        try await failInserts(into: "matrix_inbox", when: "NEW.event_id = '$b'", in: store)
        _ = try? await store.enqueueInbox([event("a"), event("b")], markingProcessed: transaction)
        try await stopFailing("matrix_inbox", in: store)
        let added = try await store.enqueueInbox([event("a"), event("b")], markingProcessed: transaction)
        #expect(added.map(\.eventID.rawValue) == ["$a", "$b"])
        #expect(try await store.isTransactionProcessed(transaction))
    }
}
