import IsthmusCommon
import IsthmusStore
import MatrixCrypto

/// The ghosts' end-to-end encryption devices (issue 30, step 3; ENCRYPTION.md §3): one device per ghost, made at
/// its first encrypted room, with its Olm account's keys published and signed by the ghost's own cross-signing
/// identity — so Matrix clients see a device its owner verified, not the bridge bot's device speaking for everyone
/// (which Element marks in red and its strict mode refuses).
///
/// The account and the cross-signing keys are kept in the store sealed under `encryption.pickle_key` *before* any of
/// them is published (the homeserver refuses different keys under a published id), and each step of
/// ``GhostDeviceSetup`` is recorded once done, so a crash or a homeserver outage resumes where it stopped. Two
/// callers asking for the same ghost at once share one setup.
actor GhostDevices {
    /// What a ghost's device is called on the homeserver (Matrix clients show it in the device list).
    static let deviceDisplayName = "Isthmus (XMPP bridge)"

    let store: Store
    let homeserver: any GhostDeviceHomeserver
    let pickleKey: PickleKey
    let logger: Logger
    /// The bridge's own users (its ghosts and bot): they get no room keys (MSC3202 "Don't encrypt as often").
    let isBridgeUser: @Sendable (UserID) -> Bool
    /// Ghosts whose device is ready, so a known one costs no store read.
    private var ready: [UserID: DeviceID] = [:]
    private var settingUp: [UserID: Task<DeviceID, any Error>] = [:]
    /// The accounts of devices whose keys are published, as last kept (the receiving side consumes one-time keys).
    var accounts: [UserID: (device: DeviceID, account: OlmAccount)] = [:]
    /// Which refused to-device messages and undecryptable events get a log line (one a minute per reason).
    var refusalLog = RefusalLogLimiter()
    /// The sending side's memory (``GhostDevices/encrypt(type:content:in:as:now:)``).
    var sending = SendingState()
    /// The missing room keys asked for already (``requestKey(for:sessionID:)``).
    var requestedKeys: Set<KeyRequestKey> = []
    /// Ghosts whose keys are being topped up (``topUpNow(_:)``): one top-up at a time per ghost.
    var toppingUp: Set<UserID> = []
    /// The Olm sessions in use, by ghost and peer device, the most recently used first (``olmSessions(with:)``).
    var olmSessions: [OlmPeer: [OlmSession]] = [:]

    init(store: Store, homeserver: any GhostDeviceHomeserver, pickleKey: PickleKey, logger: Logger,
         isBridgeUser: @escaping @Sendable (UserID) -> Bool = { _ in false }) {
        self.isBridgeUser = isBridgeUser
        self.store = store
        self.homeserver = homeserver
        self.pickleKey = pickleKey
        self.logger = logger
    }

    /// `ghost`'s device, set up first where it is not ready yet. Throws what the homeserver or the store threw; the
    /// next call goes on from the last step recorded.
    func device(of ghost: UserID) async throws -> DeviceID {
        if let device = ready[ghost] { return device }
        if let running = settingUp[ghost] { return try await running.value }
        let setup = Task { try await self.setUp(ghost) }
        settingUp[ghost] = setup
        defer { settingUp[ghost] = nil }
        let device = try await setup.value
        ready[ghost] = device
        return device
    }

    /// Whether `ghost`'s device is known to be ready (no store read, no request).
    func isReady(_ ghost: UserID) -> Bool { ready[ghost] != nil }

    /// ``device(of:)`` where a failure only costs the device for now: it is logged with `reason` (what needed it),
    /// and the next need tries again.
    func prepare(_ ghost: UserID, for reason: String) async {
        do {
            _ = try await device(of: ghost)
        } catch {
            logger.warning("Could not set up a ghost's encryption device; the next encrypted event tries again",
                           metadata: ["matrix.ghost.id": ghost.rawValue, "reason": "\(reason)", "error": "\(error)"])
        }
    }

    /// Encryption was turned on in `room`: its joined ghosts (a linked room's; a DM's ghost sees to its own) get their
    /// devices. In the background, off the transaction that brought the event: a room of many ghosts takes a few
    /// requests each, and a failure only costs a device that the ghost's next encrypted room makes again.
    nonisolated func prepareJoinedGhosts(of room: RoomID) {
        Task {
            guard let ghosts = try? await store.roomGhosts(room) else { return }
            for ghost in ghosts where ghost.joined { await prepare(ghost.user, for: "encryption turned on in a linked room") }
        }
    }

    /// Throws when the store keeps devices that `pickleKey` does not open: the key was changed or lost, and every
    /// device would be unusable (checked at start, so the operator learns it at once).
    func checkPickleKey() async throws {
        guard let any = try await store.anyGhostDevice() else { return }
        do {
            _ = try OlmAccount(pickle: any.account, key: pickleKey)
        } catch {
            throw GhostDeviceError.pickleKeyDoesNotOpen(user: any.user)
        }
    }

    private func setUp(_ ghost: UserID) async throws -> DeviceID {
        let record = try await storedOrNew(ghost)
        let account: OlmAccount, crossSigning: CrossSigningKeys
        do {
            crossSigning = try CrossSigningKeys(pickle: record.crossSigning, key: pickleKey)
            // One account object per ghost, shared with the receiving side (which uses up one-time keys) once its keys
            // are published — not before: nobody can use them yet, and a top-up must not race the first upload.
            if let known = accounts[ghost]?.account {
                account = known
            } else {
                account = try OlmAccount(pickle: record.account, key: pickleKey)
                if record.stage >= .keysPublished { accounts[ghost] = (record.device, account) }
            }
        } catch {
            throw GhostDeviceError.pickleKeyDoesNotOpen(user: ghost)
        }
        let user = ghost.rawValue, device = record.device
        var stage = record.stage
        while let step = GhostDeviceSetup.next(after: stage) {
            switch step {
            case .createDevice:
                try await homeserver.createDevice(device, of: ghost, displayName: Self.deviceDisplayName)
            case .publishKeys:
                try await homeserver.publishKeys(device: account.deviceKeys(userID: user, deviceID: device.rawValue),
                                                 oneTime: account.signedOneTimeKeys(userID: user, deviceID: device.rawValue),
                                                 fallback: account.signedFallbackKey(userID: user, deviceID: device.rawValue),
                                                 of: ghost, device: device)
                account.markKeysAsPublished()
                if accounts[ghost] == nil { accounts[ghost] = (device, account) }
            case .crossSign:
                try await homeserver.publishCrossSigning(master: crossSigning.masterKey(userID: user),
                                                         selfSigning: crossSigning.selfSigningKey(userID: user),
                                                         userSigning: crossSigning.userSigningKey(userID: user), of: ghost)
                let signed = try crossSigning.signDevice(account.deviceKeys(userID: user, deviceID: device.rawValue), userID: user)
                try await homeserver.publishSignature(of: device, signed: signed, by: ghost)
            }
            stage = GhostDeviceSetup.stage(after: step)
            try await store.updateGhostDevice(ghost, stage: stage, account: account.pickle(with: pickleKey))
        }
        if record.stage != .crossSigned {
            logger.info("A ghost's encryption device is ready", metadata: ["matrix.ghost.id": user, "matrix.device.id": device.rawValue])
        }
        return device
    }

    /// The stored device of `ghost`, or a new one kept first: a fresh account with its one-time and fallback keys,
    /// and fresh cross-signing keys, sealed.
    private func storedOrNew(_ ghost: UserID) async throws -> StoredGhostDevice {
        if let stored = try await store.ghostDevice(ghost) { return stored }
        let account = OlmAccount()
        account.generateOneTimeKeys(count: GhostDeviceSetup.oneTimeKeys)
        account.generateFallbackKey()
        return try await store.keepNewGhostDevice(StoredGhostDevice(
            user: ghost, device: .generated(), stage: .generated, account: account.pickle(with: pickleKey),
            crossSigning: CrossSigningKeys().pickle(with: pickleKey)))
    }
}

/// Why a ghost's device could not be used.
enum GhostDeviceError: Error, Equatable, CustomStringConvertible {
    /// The stored keys do not open with the configured pickle key.
    case pickleKeyDoesNotOpen(user: UserID)
    /// The device's keys are not published yet.
    case notReady(user: UserID)

    var description: String {
        switch self {
        case .pickleKeyDoesNotOpen(let user):
            "the encryption keys kept in the store (\(user)'s device, among others) do not open with encryption.pickle_key: "
                + "it was changed or lost; set the key they were sealed with"
        case .notReady(let user):
            "\(user)'s encryption device is not ready"
        }
    }
}
