import IsthmusCommon
@testable import IsthmusStore
import TestSupport
import Testing

/// `matrix_sync`: the account's sync position, kept in the commit that queues the batch's events, on both backends.
@Suite struct MatrixSyncTableTests {
    let account = UserID("@relay:example.org")!
    let room = RoomID("!r:example.org")!

    @Test(arguments: StoreBackend.all) func thePositionMovesWithTheBatchItQueued(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        let store = fixture.store
        #expect(try await store.syncPosition(account: account) == nil, "never synced")
        let added = try await store.enqueueInbox([(room, EventID("$a")!, [1])], recording: .syncPosition("s1", account: account))
        #expect(added.map(\.eventID) == [EventID("$a")!])
        #expect(try await store.syncPosition(account: account) == "s1")
        // A replay of the batch (a crash before the next sync) adds nothing new and moves on.
        let replay = try await store.enqueueInbox([(room, EventID("$a")!, [1]), (room, EventID("$b")!, [2])],
                                                  recording: .syncPosition("s2", account: account))
        #expect(replay.map(\.eventID) == [EventID("$b")!])
        try await store.record(.syncPosition("s3", account: account))
        #expect(try await fixture.reopen().syncPosition(account: account) == "s3", "kept across a reopen")
        #expect(try await store.syncPosition(account: UserID("@other:example.org")!) == nil, "one row per account")
    }
}
