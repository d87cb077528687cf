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

    /// Issue 26: the hot path's writes give their statements up front; on PostgreSQL a group of them is one round trip
    /// (pipeline mode), with every writer's result as if each had run alone.
    @Test(arguments: StoreBackend.all) func plannedWritesQueuedTogetherAreOneRoundTripOnPostgreSQL(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        let store = fixture.store
        let room = RoomID("!planned:localhost")!
        @Sendable func inbound(_ index: Int) -> MessageMapping {
            MessageMapping(room: room, eventID: EventID("$m\(index)")!, stanzaID: nil, originID: OriginID("o\(index)")!,
                           direction: .matrixToXMPP, sender: .matrix(UserID("@alice:localhost")!), state: .sending, body: "b\(index)")
        }
        _ = try await store.insertMapping(inbound(2))   // mapped already: its writer must get `false` for it
        for index in stride(from: 0, to: 30, by: 3) { _ = try await store.insertMapping(inbound(index)) }   // reflected below
        let gate = StoreGate(store)
        let before = store.activity.snapshot()
        let right = Counter()
        let tasks = try await queuedWrites(30, on: store) { index in
            switch index % 3 {
            case 0:
                // Our earlier message's reflection (marked delivered: returned) and an XMPP message (recorded).
                let reflection = ReflectionReceipt(originID: OriginID("o\(index)")!, stanzaID: StanzaID("r\(index)")!)
                let delivered = try await store.record(room: room, [.reflection(reflection), .fromXMPP(row(index), reactions: ReactionChange())])
                if delivered == [OriginID("o\(index)")!] { right.add() }
            case 1:
                let event = (room: room, eventID: EventID("$in\(index)")!, payload: [UInt8(index)])
                let added = try await store.enqueueInbox([event, event], markingProcessed: TransactionID("t\(index)")!)
                if added.map(\.eventID) == [event.eventID], added.first?.payload == [UInt8(index)] { right.add() }
            default:
                let inserted = try await store.insertMappings([(inbound(index), 0), (inbound(index + 100), 0)])
                if inserted == [index != 2, true] { right.add() }
            }
        }
        try await gate.open()
        for task in tasks { try await task.value }
        let after = store.activity.snapshot()
        #expect(right.count == 30, "each writer got its own result")
        let commits = after.commits - before.commits
        #expect(commits >= 1 && commits < 30)
        if backend == .postgres {
            // One per group, and one per statement shape the session prepares the first time (five shapes here);
            // one by one, the group's 50 statements would each be one, with BEGIN and COMMIT.
            let trips = after.roundTrips - before.roundTrips
            #expect(trips <= commits + 5, "one round trip per group (\(trips) for \(commits) commits)")
            #expect(after.statements - before.statements == 50)
        } else {
            #expect(after.roundTrips == 0)
        }
        let other = try fixture.reopen()
        for index in 0..<30 {
            switch index % 3 {
            case 0:
                #expect(try await other.mapping(room: row(index).room, eventID: row(index).eventID!)?.stanzaID == row(index).stanzaID)
                #expect(try await other.mapping(room: room, eventID: inbound(index).eventID!)?.state == .delivered)
            case 1: #expect(try await other.isTransactionProcessed(TransactionID("t\(index)")!))
            default: #expect(try await other.mapping(room: room, eventID: inbound(index + 100).eventID!)?.body == "b\(index + 100)")
            }
        }
        #expect(try await other.inbox(room).count == 10)
        await other.close()
    }

    /// A pipelined group in which some writes fail, one when its statement runs (a duplicate key) and one when the
    /// server prepares it (no such table): each of those writers gets its error, every other write is committed.
    @Test(arguments: StoreBackend.all) func aPlannedWriteThatFailsInAGroupTakesBackOnlyItsOwn(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        let store = fixture.store
        try await store.markTransactionProcessed(TransactionID("taken")!)
        let gate = StoreGate(store)
        let failures = Counter()
        let insert = "INSERT INTO appservice_transactions (txn_id) VALUES (?)"
        let tasks = try await queuedWrites(12, on: store) { index in
            var statements = [PlannedStatement(insert, ["p\(index)"])]
            if index % 5 == 1 { statements.append(PlannedStatement(insert, ["taken"])) }
            if index == 7 { statements.append(PlannedStatement("INSERT INTO no_such_table VALUES (1)", [])) }
            do {
                try await store.groupedWrite(planned: PlannedWrite(statements: statements) { _ in () })
            } catch is StoreError where index % 5 == 1 || index == 7 {
                failures.add()
            }
        }
        try await gate.open()
        for task in tasks { try await task.value }
        #expect(failures.count == 4)
        let other = try fixture.reopen()
        for index in 0..<12 {
            let kept = try await other.isTransactionProcessed(TransactionID("p\(index)")!)
            #expect(kept == (index % 5 != 1 && index != 7), "write \(index)")
        }
        await other.close()
    }

    /// A group whose statements carry megabytes (inbox rows of 256 KiB): on PostgreSQL more than the socket takes at
    /// once, so the pipeline must go on sending while it reads the server's answers. Every writer gets its rows.
    @Test(arguments: StoreBackend.all) func aPipelinedGroupOfMegabytesIsSentWhole(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        let store = fixture.store
        let room = RoomID("!big:localhost")!
        let gate = StoreGate(store)
        let right = Counter()
        let tasks = try await queuedWrites(16, on: store) { index in
            let payload = [UInt8](repeating: UInt8(index), count: 256 * 1024)
            let added = try await store.enqueueInbox([(room, EventID("$big\(index)")!, payload)], markingProcessed: TransactionID("big\(index)")!)
            if added.count == 1, added[0].payload == payload { right.add() }
        }
        try await gate.open()
        for task in tasks { try await task.value }
        #expect(right.count == 16)
        let queued = try await store.inbox(room)
        #expect(queued.count == 16)
        #expect(queued.allSatisfy { entry in entry.payload.count == 256 * 1024 && entry.payload.allSatisfy { $0 == entry.payload[0] } })
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
