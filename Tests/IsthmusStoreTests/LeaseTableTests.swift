import Dispatch
import Synchronization
import IsthmusCommon
@testable import IsthmusStore
import TestSupport
import Testing

/// The bridge lease on both backends: two `Store`s on one database stand for the two processes of an active/standby pair.
@Suite struct LeaseTableTests {
    let alpha = LeaseOwner("alpha-1")!
    let beta = LeaseOwner("beta-2")!
    let transaction = TransactionID("txn-fenced")!

    /// Two stores on one new database (a SQLite file, or a PostgreSQL database of its own, dropped with the fixture).
    func pair(_ backend: StoreBackend) async throws -> (StoreFixture, Store, Store) {
        let fixture = try await backend.open(persistent: true)
        return (fixture, fixture.store, try fixture.reopen())
    }

    @Test(arguments: StoreBackend.all) func aNewStoreHasAFreeLease(_ backend: StoreBackend) async throws {
        let (fixture, store, _) = try await pair(backend)
        defer { withExtendedLifetime(fixture) {} }  // the PostgreSQL test database lives as long as the fixture
        let state = try await store.currentLease()
        #expect(state.owner == nil)
        #expect(!state.isHeld)
        #expect(state.databaseNowMs > 1_700_000_000_000, "the database's clock is in milliseconds since 1970")
    }

    @Test(arguments: StoreBackend.all) func oneOwnerAtATimeAndTheHolderMayTakeItAgain(_ backend: StoreBackend) async throws {
        let (fixture, a, b) = try await pair(backend)
        defer { withExtendedLifetime(fixture) {} }  // the PostgreSQL test database lives as long as the fixture
        let grant = try #require(try await a.tryAcquireLease(owner: alpha, ttl: .seconds(60)))
        #expect(grant.epoch == 1)
        #expect(try await b.tryAcquireLease(owner: beta, ttl: .seconds(60)) == nil)
        let again = try #require(try await a.tryAcquireLease(owner: alpha, ttl: .seconds(60)))
        #expect(again.epoch == 1, "taking a live lease of one's own is a renewal, not a change of hands")
        let state = try await b.currentLease()
        #expect(state.owner == alpha)
        #expect(state.isHeld)
        #expect(state.remaining > .seconds(50))
    }

    @Test(arguments: StoreBackend.all) func renewalKeepsALiveLeaseAndFailsForAStaleOne(_ backend: StoreBackend) async throws {
        let (fixture, a, b) = try await pair(backend)
        defer { withExtendedLifetime(fixture) {} }  // the PostgreSQL test database lives as long as the fixture
        let short = try #require(try await a.tryAcquireLease(owner: alpha, ttl: .zero))
        // ttl zero: expired at once, so the other process takes it (a new epoch) and the old grant cannot be renewed.
        let taken = try #require(try await b.tryAcquireLease(owner: beta, ttl: .seconds(60)))
        #expect(taken.epoch == short.epoch + 1)
        #expect(try await a.renewLease(short, ttl: .seconds(60)) == false)
        #expect(try await b.renewLease(taken, ttl: .seconds(60)) == true)
        #expect(try await a.currentLease().owner == beta)
    }

    @Test(arguments: StoreBackend.all) func anExpiredLeaseTakenAgainByTheSameOwnerGetsANewEpoch(_ backend: StoreBackend) async throws {
        let (fixture, a, _) = try await pair(backend)
        defer { withExtendedLifetime(fixture) {} }  // the PostgreSQL test database lives as long as the fixture
        let first = try #require(try await a.tryAcquireLease(owner: alpha, ttl: .zero))
        let second = try #require(try await a.tryAcquireLease(owner: alpha, ttl: .seconds(60)))
        #expect(second.epoch == first.epoch + 1)
        #expect(try await a.renewLease(first, ttl: .seconds(60)) == false, "the lapsed grant stays dead")
    }

    @Test(arguments: StoreBackend.all) func releaseHandsOverAtOnce(_ backend: StoreBackend) async throws {
        let (fixture, a, b) = try await pair(backend)
        defer { withExtendedLifetime(fixture) {} }  // the PostgreSQL test database lives as long as the fixture
        let grant = try #require(try await a.tryAcquireLease(owner: alpha, ttl: .seconds(60)))
        await a.fence(with: grant)
        try await a.releaseLease(grant)
        #expect(try await a.currentLease().isHeld == false)
        let taken = try #require(try await b.tryAcquireLease(owner: beta, ttl: .seconds(60)))
        #expect(taken.epoch == grant.epoch + 1)
        await #expect(throws: LeaseLostError.self) { try await a.markTransactionProcessed(transaction) }
    }

    @Test(arguments: StoreBackend.all) func theFenceLetsTheHolderWriteAndRollsBackAStaleHoldersWrite(_ backend: StoreBackend) async throws {
        let (fixture, a, b) = try await pair(backend)
        defer { withExtendedLifetime(fixture) {} }  // the PostgreSQL test database lives as long as the fixture
        let stale = try #require(try await a.tryAcquireLease(owner: alpha, ttl: .zero))
        await a.fence(with: stale)
        let live = try #require(try await b.tryAcquireLease(owner: beta, ttl: .seconds(60)))
        await b.fence(with: live)

        // The paused old leader wakes up and writes: refused, rolled back, recorded as a fence trip.
        #expect(await a.fenceTripped == false)
        await #expect(throws: LeaseLostError.self) { try await a.markTransactionProcessed(transaction) }
        #expect(await a.fenceTripped)
        #expect(try await b.isTransactionProcessed(transaction) == false, "the refused write left nothing behind")

        // The holder writes as usual.
        try await b.markTransactionProcessed(transaction)
        #expect(try await a.isTransactionProcessed(transaction))
        #expect(await b.fenceTripped == false)
    }

    @Test(arguments: StoreBackend.all) func anUnfencedStoreWritesWithoutALease(_ backend: StoreBackend) async throws {
        // `ha.enabled: false`: no lease at all, as before issue 17.
        let (fixture, a, _) = try await pair(backend)
        defer { withExtendedLifetime(fixture) {} }  // the PostgreSQL test database lives as long as the fixture
        try await a.markTransactionProcessed(transaction)
        #expect(try await a.isTransactionProcessed(transaction))
        #expect(try await a.currentLease().owner == nil)
    }

    @Test(arguments: StoreBackend.all) func aRenewalDoesNotQueueBehindTheStoresOwnWork(_ backend: StoreBackend) async throws {
        let (fixture, a, _) = try await pair(backend)
        defer { withExtendedLifetime(fixture) {} }  // the PostgreSQL test database lives as long as the fixture
        let grant = try #require(try await a.tryAcquireLease(owner: alpha, ttl: .seconds(60)))
        await a.fence(with: grant)
        // A slow call holds the store's thread (a long query, or the head of a burst of portal writes).
        // (Only the store's thread blocks: the test waits for it without holding a thread of the cooperative pool.)
        let gate = DispatchSemaphore(value: 0)
        let entered = Atomic<Bool>(false)
        let slow = Task { try await a.read { _ in entered.store(true, ordering: .sequentiallyConsistent); gate.wait() } }
        defer { gate.signal() }
        try await eventually("the slow call holds the store's thread") { entered.load(ordering: .sequentiallyConsistent) }
        let renewal = Task { try await a.renewLease(grant, ttl: .seconds(60)) }
        let renewed = Mutex<Bool?>(nil)
        Task { let result = try? await renewal.value; renewed.withLock { $0 = result } }
        try await eventually("the renewal finishes while the store's thread is busy", timeout: 5) {
            renewed.withLock { $0 } != nil
        }
        #expect(renewed.withLock { $0 } == true)
        gate.signal()
        try await slow.value
    }

    @Test(arguments: StoreBackend.all) func aLeaseExpiringFurtherAheadThanAnyTTLCountsAsExpired(_ backend: StoreBackend) async throws {
        // The database's clock stepped back two hours after alpha's grant: its lease now seems to run for 2 h more.
        let (fixture, a, b) = try await pair(backend)
        defer { withExtendedLifetime(fixture) {} }  // the PostgreSQL test database lives as long as the fixture
        func holdAlpha(forMs ms: Int64) async throws {
            try await a.writeUnfenced { db in
                let now = LeaseTable.nowMs(db.dialect)
                _ = try db.run("UPDATE bridge_lease SET owner = ?, epoch = 5, expires_ms = \(now) + ? WHERE id = 1", alpha, ms)
            }
        }
        try await holdAlpha(forMs: LeaseTable.maxTTLMs - 60_000)
        #expect(try await b.tryAcquireLease(owner: beta, ttl: .seconds(10)) == nil, "a plausible lease is respected")
        try await holdAlpha(forMs: 7_200_000)
        let taken = try #require(try await b.tryAcquireLease(owner: beta, ttl: .seconds(10)))
        #expect(taken.epoch == 6)
        #expect(try await a.currentLease().remaining <= .seconds(10))
    }
}
