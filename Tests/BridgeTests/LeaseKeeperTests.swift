import Bridge
import IsthmusCommon
@testable import IsthmusStore
import TestSupport
import Testing

/// Two ``LeaseKeeper``s on one database (SQLite, and PostgreSQL when the bed has it), as the two processes of a pair,
/// with short timings (ttl 5 s, renewal every 250 ms, poll every 50 ms): hand-over on a graceful stop, step-down when
/// the lease is taken away.
@Suite struct LeaseKeeperTests {
    static let timing = LeaseRoleMachine.Configuration(leaseTTL: .seconds(5), renewEvery: .milliseconds(250),
                                                       pollEvery: .milliseconds(50))

    func keeper(_ store: Store, _ name: String) -> (LeaseKeeper, AsyncQueue<LeaseKeeper.Command>) {
        let keeper = LeaseKeeper(store: store, owner: LeaseOwner(name)!, configuration: Self.timing, tick: .milliseconds(20),
                                 logger: .disabled)
        return (keeper, AsyncQueue.collecting(keeper.commands))
    }

    func grant(_ command: LeaseKeeper.Command) -> LeaseGrant? {
        if case .becomeActive(let grant) = command { return grant }
        return nil
    }

    @Test(arguments: StoreBackend.all) func oneIsActiveAndAGracefulStopHandsOverToTheOther(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        let storeA = fixture.store, storeB = try fixture.reopen()
        defer { withExtendedLifetime(fixture) {} }  // the PostgreSQL test database lives as long as the fixture
        let (a, commandsA) = keeper(storeA, "a")
        let runA = Task { await a.run() }
        let grantA = try #require(grant(try await commandsA.next(within: 10, "a active")))
        let (b, commandsB) = keeper(storeB, "b")
        let runB = Task { await b.run() }
        // a renews (the row's expiry moves on) while b stands by.
        try await eventually("a renewed for a second", timeout: 10) {
            let state = try await storeB.currentLease()
            return state.owner?.description == "a" && state.epoch == grantA.epoch && state.expiresMs >= grantA.expiresMs + 1000
        }
        #expect(commandsB.pending.isEmpty, "b stood by")

        a.stopRequested()
        #expect(try await commandsA.next(within: 10, "a stops services") == .stopServices)
        a.servicesStopped()
        await runA.value
        let grantB = try #require(grant(try await commandsB.next(within: 10, "b active")))
        #expect(grantB.epoch == grantA.epoch + 1)
        await #expect(throws: LeaseLostError.self) { try await storeA.markTransactionProcessed(TransactionID("late")!) }

        b.stopRequested()
        #expect(try await commandsB.next(within: 10, "b stops services") == .stopServices)
        b.servicesStopped()
        await runB.value
        #expect(try await storeA.currentLease().isHeld == false, "released")
    }

    @Test(arguments: StoreBackend.all) func aStandbyAskedToStopEndsWithoutActing(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        let holder = try fixture.reopen()
        defer { withExtendedLifetime(fixture) {} }
        _ = try #require(try await holder.tryAcquireLease(owner: LeaseOwner("holder")!, ttl: .seconds(60)))
        let (b, commands) = keeper(fixture.store, "b")
        let run = Task { await b.run() }
        b.stopRequested()
        await run.value
        // The command stream ended without a command: a standby is given nothing to do.
        await #expect(throws: AsyncQueue<LeaseKeeper.Command>.Finished.self) { try await commands.next(within: 10, "no command") }
        #expect(try await holder.currentLease().owner?.description == "holder")
    }

    @Test(arguments: StoreBackend.all) func aLeaseTakenAwayStopsTheHolder(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        let store = fixture.store, other = try fixture.reopen()
        defer { withExtendedLifetime(fixture) {} }
        let (a, commands) = keeper(store, "a")
        let run = Task { await a.run() }
        _ = try #require(grant(try await commands.next(within: 10, "a active")))
        // Another owner's grant replaces a's (what a pause past the expiry and a standby's take-over leave behind).
        try await other.writeUnfenced { db in
            _ = try db.run("UPDATE bridge_lease SET owner = 'b', epoch = epoch + 1, expires_ms = expires_ms + 60000 WHERE id = 1")
        }
        #expect(try await commands.next(within: 10, "a steps down") == .stepDown(.refused))
        await run.value
    }
}
