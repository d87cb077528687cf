import IsthmusCommon
@testable import IsthmusStore
import Testing

/// The store counts its calls, statements and commits (``StoreActivity``): the metrics and `scripts/bench`'s
/// per-message breakdown rely on those counts being exact.
@Suite struct StoreActivityTests {
    @Test func aCallWithOneStatementAndACommitCountsOneOfEach() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        let before = store.activity.snapshot()
        try await store.markTransactionProcessed(TransactionID("t1")!)
        let afterWrite = store.activity.snapshot()
        #expect(afterWrite.calls - before.calls == 1)
        #expect(afterWrite.commits - before.commits == 1)
        #expect(afterWrite.statements - before.statements >= 1)

        let processed = try await store.isTransactionProcessed(TransactionID("t1")!)
        let afterRead = store.activity.snapshot()
        #expect(processed)
        #expect(afterRead.calls - afterWrite.calls == 1)
        #expect(afterRead.statements - afterWrite.statements == 1)
        #expect(afterRead.commits == afterWrite.commits)
    }

    @Test func statementsInsideOneTransactionAreOneCommit() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        let before = store.activity.snapshot()
        try await store.write { database in
            for index in 0..<3 { try database.run("INSERT INTO appservice_transactions (txn_id) VALUES (?)", "s\(index)") }
        }
        let after = store.activity.snapshot()
        #expect(after.statements - before.statements == 3)
        #expect(after.commits - before.commits == 1)
        #expect(after.calls - before.calls == 1)
    }

    @Test func aRolledBackTransactionIsNoCommit() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        let before = store.activity.snapshot()
        await #expect(throws: StoreError.self) {
            try await store.write { database in try database.run("INSERT INTO no_such_table VALUES (1)") }
        }
        #expect(store.activity.snapshot().commits == before.commits)
    }
}
