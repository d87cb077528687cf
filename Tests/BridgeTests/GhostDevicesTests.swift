@testable import Bridge
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixCrypto
import Synchronization
import TestSupport
import Testing

/// ``GhostDevices``: a ghost's encryption device is made once, published step by step, resumed after a failure, and
/// kept sealed.
@Suite struct GhostDevicesTests {
    let ghost = UserID("@_xmpp_romeo:localhost")!

    /// Records the homeserver calls; fails the calls named in `failing` once each.
    final class RecordingHomeserver: GhostDeviceHomeserver {
        struct Published: Sendable {
            var deviceKeys: CanonicalJSON?
            var oneTime: [String: CanonicalJSON]
            var fallback: [String: CanonicalJSON]
        }
        let calls = Mutex<[String]>([])
        let failing = Mutex<Set<String>>([])
        let published = Mutex<[Published]>([])
        let crossSigning = Mutex<(master: CanonicalJSON, selfSigning: CanonicalJSON)?>(nil)
        let signatures = Mutex<[CanonicalJSON]>([])

        struct Refused: Error {}

        private func record(_ call: String) throws {
            calls.withLock { $0.append(call) }
            if failing.withLock({ $0.remove(call) }) != nil { throw Refused() }
        }

        func createDevice(_ device: DeviceID, of user: UserID, displayName: String) async throws {
            try record("createDevice \(device)")
        }

        func publishKeys(device keys: CanonicalJSON?, oneTime: [String: CanonicalJSON], fallback: [String: CanonicalJSON],
                         of user: UserID, device: DeviceID) async throws {
            // Seen even when the call then fails (an answer lost after the homeserver kept them).
            published.withLock { $0.append(Published(deviceKeys: keys, oneTime: oneTime, fallback: fallback)) }
            try record("publishKeys")
        }

        func publishCrossSigning(master: CanonicalJSON, selfSigning: CanonicalJSON, userSigning: CanonicalJSON, of user: UserID) async throws {
            try record("publishCrossSigning")
            crossSigning.withLock { $0 = (master, selfSigning) }
        }

        func publishSignature(of device: DeviceID, signed: CanonicalJSON, by user: UserID) async throws {
            try record("publishSignature")
            signatures.withLock { $0.append(signed) }
        }

        // The sending side: an unencrypted room with nobody in it unless a test says otherwise.
        let encryption = Mutex<JSONValue?>(nil)
        let members = Mutex<[UserID]>([])
        /// `/keys/query`'s `device_keys` and `/keys/claim`'s `one_time_keys`, as the test sets them.
        let deviceKeysAnswer = Mutex<JSONValue>(.object([:]))
        let claimAnswer = Mutex<JSONValue>(.object([:]))
        func roomEncryption(of room: RoomID, as ghost: UserID) async throws -> JSONValue? { encryption.withLock { $0 } }
        func memberIDs(of room: RoomID, as ghost: UserID) async throws -> [UserID] { members.withLock { $0 } }
        func deviceKeys(of users: [UserID], as ghost: UserID) async throws -> JSONValue { deviceKeysAnswer.withLock { $0 } }
        func claimOneTimeKeys(_ devices: [UserID: [DeviceID]], as ghost: UserID) async throws -> JSONValue {
            calls.withLock { $0.append("claim \(devices.values.flatMap { $0 }.map(\.rawValue).sorted())") }
            return claimAnswer.withLock { $0 }
        }
        let toDevice = Mutex<[(kind: ToDeviceKind, messages: [UserID: [DeviceID: JSONValue]], sender: UserID)]>([])
        func sendToDevices(_ messages: [UserID: [DeviceID: JSONValue]], kind: ToDeviceKind, transactionID: ClientTransactionID,
                           as ghost: UserID) async throws {
            toDevice.withLock { $0.append((kind, messages, ghost)) }
        }
    }

    func devices(_ store: Store, _ homeserver: RecordingHomeserver, key: PickleKey) -> GhostDevices {
        GhostDevices(store: store, homeserver: homeserver, pickleKey: key, logger: .disabled)
    }

    @Test func aDeviceIsCreatedPublishedAndCrossSignedOnceThenKnown() async throws {
        let fixture = try await StoreBackend.sqlite.open()
        let homeserver = RecordingHomeserver()
        let key = PickleKey.random()
        let devices = devices(fixture.store, homeserver, key: key)
        let device = try await devices.device(of: ghost)
        #expect(homeserver.calls.withLock { $0 } == ["createDevice \(device)", "publishKeys", "publishCrossSigning", "publishSignature"])
        #expect(try await devices.device(of: ghost) == device)
        #expect(homeserver.calls.withLock { $0.count } == 4, "a ready device costs no call")

        let published = try #require(homeserver.published.withLock { $0.first })
        #expect(published.oneTime.count == GhostDeviceSetup.oneTimeKeys && published.fallback.count == 1)
        let deviceKeys = try #require(published.deviceKeys)
        #expect(deviceKeys["device_id"] == .string(device.rawValue))
        // The chain: the self-signing key (signed by the master key) signs the device.
        let (master, selfSigning) = try #require(homeserver.crossSigning.withLock { $0 })
        guard case .object(let masterKeys)? = master["keys"], let masterID = masterKeys.keys.first,
              case .string(let masterText)? = masterKeys[masterID],
              case .object(let sskKeys)? = selfSigning["keys"], let sskID = sskKeys.keys.first,
              case .string(let sskText)? = sskKeys[sskID] else { Issue.record("no keys"); return }
        try selfSigning.verifySignature(by: ghost.rawValue, keyID: masterID, publicKey: Ed25519PublicKey(base64: masterText))
        let signed = try #require(homeserver.signatures.withLock { $0.first })
        try signed.verifySignature(by: ghost.rawValue, keyID: sskID, publicKey: Ed25519PublicKey(base64: sskText))

        let stored = try #require(try await fixture.store.ghostDevice(ghost))
        #expect(stored.stage == .crossSigned && stored.device == device)
        // Sealed: the stored account opens with the key, and its keys are the published ones, marked published.
        let account = try OlmAccount(pickle: stored.account, key: key)
        #expect(try account.deviceKeys(userID: ghost.rawValue, deviceID: device.rawValue) == deviceKeys)
        #expect(try account.signedOneTimeKeys(userID: ghost.rawValue, deviceID: device.rawValue).isEmpty)
    }

    @Test func aFailedStepIsResumedWithTheSameDeviceAndKeys() async throws {
        let fixture = try await StoreBackend.sqlite.open()
        let homeserver = RecordingHomeserver()
        homeserver.failing.withLock { $0 = ["publishCrossSigning"] }
        let key = PickleKey.random()
        await #expect(throws: RecordingHomeserver.Refused.self) { try await devices(fixture.store, homeserver, key: key).device(of: ghost) }
        #expect(try await fixture.store.ghostDevice(ghost)?.stage == .keysPublished)

        // A new process (nothing in memory) goes on from the cross-signing: no second device, no keys published again.
        let device = try await devices(fixture.store, homeserver, key: key).device(of: ghost)
        let calls = homeserver.calls.withLock { $0 }
        #expect(calls == ["createDevice \(device)", "publishKeys", "publishCrossSigning", "publishCrossSigning", "publishSignature"])
        #expect(try await fixture.store.ghostDevice(ghost)?.stage == .crossSigned)
    }

    @Test func aFailedPublicationIsRepeatedWithTheSameKeys() async throws {
        let fixture = try await StoreBackend.sqlite.open()
        let homeserver = RecordingHomeserver()
        homeserver.failing.withLock { $0 = ["publishKeys"] }
        let key = PickleKey.random()
        let devices = devices(fixture.store, homeserver, key: key)
        await #expect(throws: RecordingHomeserver.Refused.self) { try await devices.device(of: ghost) }
        _ = try await devices.device(of: ghost)
        let published = homeserver.published.withLock { $0 }
        try #require(published.count == 2)
        #expect(published[0].deviceKeys == published[1].deviceKeys && published[0].oneTime == published[1].oneTime
                && published[0].fallback == published[1].fallback, "the homeserver refuses different keys under a published id")
    }

    @Test func oneTimeKeysRunningLowAndAUsedFallbackKeyAreToppedUp() async throws {
        let fixture = try await StoreBackend.sqlite.open()
        let homeserver = RecordingHomeserver()
        let key = PickleKey.random()
        let devices = devices(fixture.store, homeserver, key: key)
        let device = try await devices.device(of: ghost)
        let first = try #require(homeserver.published.withLock { $0.first })

        // Plenty left and the fallback key unused: nothing to do.
        await devices.topUpNow([DeviceKeyCount(user: ghost, device: device, oneTimeKeys: 30, unusedFallbackKey: true)])
        #expect(homeserver.published.withLock { $0.count } == 1)
        // 10 left: 40 new ones, signed by the device, none of the earlier ids again.
        await devices.topUpNow([DeviceKeyCount(user: ghost, device: device, oneTimeKeys: 10, unusedFallbackKey: true)])
        let refill = try #require(homeserver.published.withLock { $0.last })
        #expect(refill.deviceKeys == nil && refill.oneTime.count == 40 && refill.fallback.isEmpty)
        #expect(Set(refill.oneTime.keys).isDisjoint(with: first.oneTime.keys))
        // The fallback key was used: a new one.
        await devices.topUpNow([DeviceKeyCount(user: ghost, device: device, oneTimeKeys: 40, unusedFallbackKey: false)])
        let fallback = try #require(homeserver.published.withLock { $0.last })
        #expect(fallback.oneTime.isEmpty && fallback.fallback.count == 1 && fallback.fallback.keys != first.fallback.keys)
        // Kept: a restart publishes nothing again (all marked published), and another device's report changes nothing.
        let stored = try #require(try await fixture.store.ghostDevice(ghost))
        let account = try OlmAccount(pickle: stored.account, key: key)
        #expect(try account.signedOneTimeKeys(userID: ghost.rawValue, deviceID: device.rawValue).isEmpty)
        await devices.topUpNow([DeviceKeyCount(user: ghost, device: DeviceID("OTHERDEVICE")!, oneTimeKeys: 0, unusedFallbackKey: false)])
        #expect(homeserver.published.withLock { $0.count } == 3)
    }

    @Test func concurrentCallersShareOneSetup() async throws {
        let fixture = try await StoreBackend.sqlite.open()
        let homeserver = RecordingHomeserver()
        let devices = devices(fixture.store, homeserver, key: PickleKey.random())
        let ids = try await withThrowingTaskGroup(of: DeviceID.self) { group in
            for _ in 0..<8 { group.addTask { try await devices.device(of: self.ghost) } }
            return try await group.reduce(into: Set<DeviceID>()) { $0.insert($1) }
        }
        #expect(ids.count == 1)
        #expect(homeserver.calls.withLock { $0.filter { $0.hasPrefix("createDevice") }.count } == 1)
    }

    @Test func anotherPickleKeyIsRefusedAtStartAndNeverMakesASecondDevice() async throws {
        let fixture = try await StoreBackend.sqlite.open()
        let homeserver = RecordingHomeserver()
        try await devices(fixture.store, homeserver, key: PickleKey(secret: "the first secret, long enough to use")).checkPickleKey()
        _ = try await devices(fixture.store, homeserver, key: PickleKey(secret: "the first secret, long enough to use")).device(of: ghost)
        let changed = devices(fixture.store, homeserver, key: PickleKey(secret: "another secret, long enough to use!"))
        await #expect(throws: GhostDeviceError.pickleKeyDoesNotOpen(user: ghost)) { try await changed.checkPickleKey() }
        await #expect(throws: GhostDeviceError.pickleKeyDoesNotOpen(user: ghost)) { try await changed.device(of: ghost) }
        #expect(homeserver.calls.withLock { $0.filter { $0.hasPrefix("createDevice") }.count } == 1)
        #expect(GhostDeviceError.pickleKeyDoesNotOpen(user: ghost).description.contains("encryption.pickle_key"))
    }
}
