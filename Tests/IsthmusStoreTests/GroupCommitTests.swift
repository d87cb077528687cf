import Dispatch
import IsthmusCommon
@testable import IsthmusStore
import Synchronization
import TestSupport
import Testing

/// Group commit (``Store/groupedWrite(_:)``): the hot path's writes queued together share one commit, each returns
/// only once that commit holds its writes, and a write that fails takes back only its own.
@Suite struct GroupCommitTests {
    /// Holds the store's thread until released, so that the calls started meanwhile queue up behind it.
    final class StoreGate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        let task: Task<Void, any Error>

        init(_ store: Store) {
            let semaphore = self.semaphore
            task = Task { try await store.read { _ in semaphore.wait() } }
        }

        func open() async throws {
            semaphore.signal()
            try await task.value
        }
    }

    /// A count shared with the writing tasks.
    final class Counter: Sendable {
        private let value = Atomic<Int>(0)
        func add() { value.add(1, ordering: .relaxed) }
        var count: Int { value.load(ordering: .relaxed) }
    }

    func row(_ index: Int) -> MessageMapping {
        MessageMapping(room: RoomID("!r\(index % 7):localhost")!, eventID: EventID("$e\(index)"),
                       stanzaID: StanzaID("s\(index)"), originID: nil, direction: .xmppToMatrix,
                       sender: .occupant(.nick("n\(index)")), state: .delivered, nick: "n\(index)")
    }

    /// Starts `count` writes at once behind a closed gate and waits until each task has reached its call.
    func queuedWrites(_ count: Int, on store: Store,
                      _ write: @escaping @Sendable (Int) async throws -> Void) async throws -> [Task<Void, any Error>] {
        let started = Counter()
        let tasks = (0..<count).map { index in
            Task {
                started.add()
                try await write(index)
            }
        }
        try await eventually("every write has started") { started.count == count }
        return tasks
    }

    @Test(arguments: StoreBackend.all) func writesQueuedTogetherShareACommitAndAreAllDurable(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        let store = fixture.store
        let gate = StoreGate(store)
        let before = store.activity.snapshot()
        let tasks = try await queuedWrites(40, on: store) { try await store.recordBridgedFromXMPP(row($0)) }
        try await gate.open()
        for task in tasks { try await task.value }
        let commits = store.activity.snapshot().commits - before.commits
        #expect(commits >= 1)
        #expect(commits < 40, "40 writes queued together should share commits")
        // Durable: another connection (another process would see the same) reads every row.
        let other = try fixture.reopen()
        for index in 0..<40 {
            let mapping = try await other.mapping(room: row(index).room, eventID: row(index).eventID!)
            #expect(mapping?.stanzaID == row(index).stanzaID)
        }
        await other.close()
    }

    @Test(arguments: StoreBackend.all) func aWriteThatFailsInAGroupTakesBackOnlyItsOwnWrites(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        let store = fixture.store
        let gate = StoreGate(store)
        let failures = Counter()
        let tasks = try await queuedWrites(9, on: store) { index in
            do {
                try await store.groupedWrite { database in
                    try database.run("INSERT INTO appservice_transactions (txn_id) VALUES (?)", "t\(index)")
                    // Every third call fails after a write of its own, which must be rolled back with it.
                    if index % 3 == 1 { try database.run("INSERT INTO no_such_table VALUES (1)") }
                }
            } catch is StoreError where index % 3 == 1 {
                failures.add()
            }
        }
        try await gate.open()
        for task in tasks { try await task.value }
        #expect(failures.count == 3)
        let other = try fixture.reopen()
        for index in 0..<9 {
            let kept = try await other.isTransactionProcessed(TransactionID("t\(index)")!)
            #expect(kept == (index % 3 != 1), "write \(index)")
        }
        await other.close()
    }

    @Test(arguments: StoreBackend.all) func aWriteOutsideTheGroupCommitsTheGroupFirst(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        let store = fixture.store
        let gate = StoreGate(store)
        let tasks = try await queuedWrites(12, on: store) { index in
            if index % 4 == 0 {
                try await store.markTransactionProcessed(TransactionID("plain\(index)")!)
            } else {
                try await store.recordBridgedFromXMPP(row(index))
            }
        }
        try await gate.open()
        for task in tasks { try await task.value }
        let other = try fixture.reopen()
        for index in 0..<12 {
            if index % 4 == 0 {
                #expect(try await other.isTransactionProcessed(TransactionID("plain\(index)")!))
            } else {
                #expect(try await other.mapping(room: row(index).room, eventID: row(index).eventID!) != nil)
            }
        }
        await other.close()
    }

    @Test func aGroupCommitsAtItsSizeLimitAndTheNextWriteOpensAnother() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        let gate = StoreGate(store)
        let count = Store.maximumGroupSize + 10
        let before = store.activity.snapshot()
        let tasks = try await queuedWrites(count, on: store) { index in
            _ = try await store.groupedWrite { database in
                try database.run("INSERT INTO appservice_transactions (txn_id) VALUES (?)", "t\(index)")
            }
        }
        try await gate.open()
        for task in tasks { try await task.value }
        #expect(store.activity.snapshot().commits - before.commits >= 2, "no commit carries more than the limit")
        for index in [0, Store.maximumGroupSize, count - 1] {
            #expect(try await store.isTransactionProcessed(TransactionID("t\(index)")!))
        }
    }

    @Test func aLoneWriteCostsOneCommit() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        let before = store.activity.snapshot()
        try await store.recordBridgedFromXMPP(row(1))
        let after = store.activity.snapshot()
        #expect(after.commits - before.commits == 1)
        #expect(after.statements - before.statements == 2, "the insert and the resume point")
    }
}
