import IsthmusCommon
@testable import IsthmusStore
import TestSupport
import Testing

/// `ghost_devices`: a ghost's encryption device, sealed secrets and setup stage, on both backends.
@Suite struct GhostDeviceTableTests {
    let ghost = UserID("@xmpp_alice=40example.org:localhost")!

    @Test(arguments: StoreBackend.all) func theFirstDeviceKeptWinsAndItsStageMovesOn(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        let store = fixture.store
        #expect(try await store.ghostDevice(ghost) == nil)
        let first = StoredGhostDevice(user: ghost, device: DeviceID("ISTHMUSAAAA")!, stage: .generated,
                                      account: [1, 0, 0xFF, 2], crossSigning: [3, 4])
        #expect(try await store.keepNewGhostDevice(first) == first)
        let second = StoredGhostDevice(user: ghost, device: DeviceID("ISTHMUSBBBB")!, stage: .generated, account: [9], crossSigning: [9])
        #expect(try await store.keepNewGhostDevice(second) == first, "a ghost never gets a second device")

        try await store.updateGhostDevice(ghost, stage: .keysPublished, account: [7, 7])
        var expected = first
        expected.stage = .keysPublished
        expected.account = [7, 7]
        #expect(try await fixture.reopen().ghostDevice(ghost) == expected, "kept across a reopen")
        #expect(try await store.ghostDevice(UserID("@xmpp_bob=40example.org:localhost")!) == nil)
    }

    @Test func stagesAreOrderedAsTheSetupGoes() {
        #expect(StoredGhostDevice.Stage.allCases.sorted() == [.generated, .deviceCreated, .keysPublished, .crossSigned])
        #expect(StoredGhostDevice.Stage.deviceCreated < .crossSigned)
    }
}

/// The encryption sessions' tables: Olm sessions capped per peer, the newest first; room keys per sharer; indexes.
@Suite struct CryptoSessionTableTests {
    let ghost = UserID("@_xmpp_romeo:localhost")!
    let room = RoomID("!dm:localhost")!

    @Test(arguments: StoreBackend.all) func olmSessionsAreCappedPerPeerNewestFirst(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        for index in 0..<(Store.olmSessionsKept + 3) {
            try await store.keepToDeviceChanges([ToDeviceChanges(olmSession: StoredOlmSession(
                user: ghost, senderKey: "peer", sessionID: "s\(index)", pickle: [UInt8(index)], lastUsed: Int64(1000 + index)))])
        }
        let kept = try await store.olmSessions(of: ghost, with: "peer")
        #expect(kept.map(\.sessionID) == (3..<(Store.olmSessionsKept + 3)).reversed().map { "s\($0)" })
        #expect(try await store.olmSessions(of: ghost, with: "another peer").isEmpty)
    }

    @Test(arguments: StoreBackend.all) func aRoomKeyIsPerSharerAndAnIndexPerEvent(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        let alice = UserID("@alice:localhost")!, mallory = UserID("@mallory:localhost")!
        let forwarded = StoredMegolmSession(room: room, sessionID: "S", sender: mallory, senderKey: "m", signingKey: "m", pickle: [1])
        let own = StoredMegolmSession(room: room, sessionID: "S", sender: alice, senderKey: "a", signingKey: "a", pickle: [2])
        try await store.keepToDeviceChanges([ToDeviceChanges(roomKey: forwarded), ToDeviceChanges(roomKey: own)])
        #expect(try await store.megolmSession("S", in: room, sharedBy: alice) == own, "another member's copy does not take it over")
        #expect(try await store.megolmSession("S", in: room, sharedBy: mallory) == forwarded)
        #expect(try await store.recordMegolmIndex(0, of: "S", in: room, by: EventID("$a")!))
        #expect(try await store.recordMegolmIndex(0, of: "S", in: room, by: EventID("$a")!), "the same event again")
        #expect(try await !store.recordMegolmIndex(0, of: "S", in: room, by: EventID("$b")!), "another event: a replay")
    }
}
