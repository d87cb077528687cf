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
