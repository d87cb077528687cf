import IsthmusCommon
@testable import IsthmusStore
import TestSupport
import Testing

/// What only PostgreSQL can do to the store: a connection lost under it, two processes migrating one new database. Needs
/// the test bed's PostgreSQL (`scripts/test`): skipped without it (``needsTestBedPostgres``).
@Suite(.needsTestBedPostgres) struct PostgresStoreRealServerTests {
    /// The connection breaks in the middle of a transaction (the server ends the session): that call fails as
    /// ``StoreError/Kind/unavailable`` and rolls back; the next call gets a new connection and works.
    @Test func aLostPostgresConnectionFailsOneCallAndTheNextWorks() async throws {
        let fixture = try await StoreBackend.postgres.open()
        let database = try #require(fixture.postgresDatabase)
        let store = fixture.store
        try await store.markTransactionProcessed(TransactionID("before")!)
        do {
            try await store.write { db in
                try db.run("INSERT INTO appservice_transactions (txn_id) VALUES (?)", "lost")
                try database.runAsAdministrator(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database.name)'")
                try db.run("INSERT INTO appservice_transactions (txn_id) VALUES (?)", "after-the-break")
            }
            Issue.record("the write on a terminated session succeeded")
        } catch let error as StoreError {
            #expect(error.kind == .unavailable, "\(error)")
        }
        #expect(try await store.isTransactionProcessed(TransactionID("before")!))
        #expect(try await !store.isTransactionProcessed(TransactionID("lost")!))
        try await store.markTransactionProcessed(TransactionID("after")!)
        #expect(try await store.isTransactionProcessed(TransactionID("after")!))
    }

    /// Issue 26: the session ends in the middle of a pipelined group commit. Every writer of the group gets
    /// ``StoreError/Kind/unavailable`` and nothing of it is written; the connection is not used again and the next
    /// write works.
    @Test func aSessionLostInAPipelinedGroupFailsTheGroupAndTheNextWriteWorks() async throws {
        let fixture = try await StoreBackend.postgres.open()
        let store = fixture.store
        let gate = GroupCommitTests.StoreGate(store)
        let unavailable = GroupCommitTests.Counter()
        let insert = "INSERT INTO appservice_transactions (txn_id) VALUES (?)"
        let tasks = try await GroupCommitTests().queuedWrites(6, on: store) { index in
            var statements = [PlannedStatement(insert, ["lost\(index)"])]
            // The server ends this very session half-way through the group's statements.
            if index == 3 { statements.append(PlannedStatement("SELECT pg_terminate_backend(pg_backend_pid())", [])) }
            do {
                try await store.groupedWrite(planned: PlannedWrite(statements: statements) { _ in () })
            } catch let error as StoreError where error.kind == .unavailable {
                unavailable.add()
            }
        }
        try await gate.open()
        for task in tasks { try await task.value }
        #expect(unavailable.count == 6, "the whole group failed with the session")
        for index in 0..<6 { #expect(try await !store.isTransactionProcessed(TransactionID("lost\(index)")!)) }
        try await store.markTransactionProcessed(TransactionID("after")!)
        _ = try await store.enqueueInbox([(RoomID("!r:localhost")!, EventID("$after")!, [1])])
        #expect(try await store.isTransactionProcessed(TransactionID("after")!))
        #expect(try await store.inbox(RoomID("!r:localhost")!).map(\.eventID) == [EventID("$after")!])
    }

    /// Two processes opening one new PostgreSQL database at once (both `serve`s of a pair starting together): both
    /// open it, and each migration is applied and recorded once (the advisory lock serialises them).
    @Test func concurrentOpensOfANewPostgresDatabaseMigrateOnce() async throws {
        let database = try PostgresTestDatabase()
        let url = try #require(PostgresURL(database.url))
        let failures = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    do {
                        _ = try Store(location: .postgres(url: url), logger: .disabled)
                        return nil
                    } catch {
                        return "\(error)"
                    }
                }
            }
            return await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
        }
        #expect(failures.isEmpty)
        let store = try Store(location: .postgres(url: url), logger: .disabled)
        #expect(try await store.appliedMigrations() == Migrations.all.map(\.version))
        let rows = try await store.read { db in try db.query("SELECT COUNT(*) FROM schema_migrations") { $0.int(0) } }
        #expect(rows == [Migrations.all.count])
    }
}
