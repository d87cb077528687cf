import IsthmusStore

/// The steps that give a ghost its end-to-end encryption device on the homeserver (ENCRYPTION.md §3), in order, each
/// recorded once the homeserver accepted it. Pure: ``GhostDevices`` performs them.
///
/// Every step may be repeated after a crash between the homeserver's answer and the record: `PUT /devices/{id}` only
/// renames an existing device, and the homeserver accepts the same device keys, one-time keys and cross-signing keys
/// again (it refuses *different* keys under a published id, which is why the account is kept before it is published).
enum GhostDeviceSetup {
    enum Step: Sendable, Equatable {
        /// `PUT /devices/{id}?user_id=` as the appservice.
        case createDevice
        /// `/keys/upload` as the device: device keys, one-time keys, the fallback key.
        case publishKeys
        /// `/keys/device_signing/upload` (master, self-signing, user-signing) and `/keys/signatures/upload` (the
        /// self-signing key's signature of the device).
        case crossSign
    }

    /// One-time keys a new device publishes: half of what the account keeps at most, as vodozemac and mautrix do, so
    /// a refill (when the homeserver reports fewer) has room.
    static let oneTimeKeys = 50

    /// The step after `stage`, nil once the device is ready.
    static func next(after stage: StoredGhostDevice.Stage) -> Step? {
        switch stage {
        case .generated: .createDevice
        case .deviceCreated: .publishKeys
        case .keysPublished: .crossSign
        case .crossSigned: nil
        }
    }

    /// The stage a step reaches.
    static func stage(after step: Step) -> StoredGhostDevice.Stage {
        switch step {
        case .createDevice: .deviceCreated
        case .publishKeys: .keysPublished
        case .crossSign: .crossSigned
        }
    }
}
