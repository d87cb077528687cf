import IsthmusCommon

/// `ghost_devices`: the end-to-end encryption device of each ghost that has one (issue 30; ENCRYPTION.md §3): its
/// device id, how far its setup got on the homeserver, its Olm account and its cross-signing keys. The account and
/// the keys are sealed by the bridge (AES-256-GCM under `encryption.pickle_key`) before they reach the store: the
/// store never sees them in the clear.
enum GhostDeviceTable {
    /// Migration 22 on SQLite.
    static let schema = """
        CREATE TABLE ghost_devices (
            user_id        TEXT PRIMARY KEY,
            device_id      TEXT NOT NULL,
            stage          TEXT NOT NULL,
            account        BLOB NOT NULL,
            cross_signing  BLOB NOT NULL
        );
        """
    /// Migration 22 on PostgreSQL.
    static let postgresSchema = """
        CREATE TABLE ghost_devices (
            user_id        TEXT PRIMARY KEY,
            device_id      TEXT NOT NULL,
            stage          TEXT NOT NULL,
            account        BYTEA NOT NULL,
            cross_signing  BYTEA NOT NULL
        );
        """
}

/// A ghost's device as stored: sealed secrets and the setup's progress.
public struct StoredGhostDevice: Sendable, Equatable {
    /// How far the device's setup on the homeserver got; each step is recorded once the homeserver accepted it, so a
    /// restart goes on from there (every step may be repeated: the homeserver accepts the same keys again).
    public enum Stage: String, Sendable, CaseIterable, Comparable {
        /// Keys made and kept; nothing on the homeserver yet.
        case generated
        /// The device exists (`PUT /devices/{id}` as the appservice).
        case deviceCreated = "device_created"
        /// Its device keys, one-time keys and fallback key are published.
        case keysPublished = "keys_published"
        /// Its owner's cross-signing keys are published and the self-signing key's signature of the device too: ready.
        case crossSigned = "cross_signed"

        public static func < (lhs: Self, rhs: Self) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    public var user: UserID
    public var device: DeviceID
    public var stage: Stage
    /// The sealed Olm account.
    public var account: [UInt8]
    /// The sealed cross-signing keys.
    public var crossSigning: [UInt8]

    public init(user: UserID, device: DeviceID, stage: Stage, account: [UInt8], crossSigning: [UInt8]) {
        self.user = user
        self.device = device
        self.stage = stage
        self.account = account
        self.crossSigning = crossSigning
    }
}

extension Store {
    /// `user`'s device, if it has one. A stage this version does not know reads as `generated` (every step is then
    /// repeated, which the homeserver accepts).
    public func ghostDevice(_ user: UserID) throws -> StoredGhostDevice? {
        try read { db in
            try db.query("SELECT device_id, stage, account, cross_signing FROM ghost_devices WHERE user_id = ?", user) { row in
                row.id(0).map { StoredGhostDevice(user: user, device: $0, stage: row.string(1).flatMap(StoredGhostDevice.Stage.init) ?? .generated,
                                                  account: row.blob(2), crossSigning: row.blob(3)) }
            }.first ?? nil
        }
    }

    /// How many ghosts have a device.
    public func ghostDeviceCount() throws -> Int {
        try read { db in try db.query("SELECT COUNT(*) FROM ghost_devices") { $0.int(0) ?? 0 }.first ?? 0 }
    }

    /// Some ghost's device, if any is kept (to check that the pickle key opens what is stored).
    public func anyGhostDevice() throws -> StoredGhostDevice? {
        guard let user = try read({ db in try db.query("SELECT user_id FROM ghost_devices LIMIT 1") { row -> UserID? in row.id(0) }.first ?? nil })
        else { return nil }
        return try ghostDevice(user)
    }

    /// A ghost's device that exists on the homeserver (past `generated`), preferring `preferred`'s: where `doctor`
    /// sends its to-device probe (the homeserver drops a message to a device it does not know).
    public func createdGhostDevice(preferring preferred: UserID) throws -> (user: UserID, device: DeviceID)? {
        try read { db in
            try db.query("SELECT user_id, device_id FROM ghost_devices WHERE stage <> ? ORDER BY CASE WHEN user_id = ? THEN 0 ELSE 1 END LIMIT 1",
                         StoredGhostDevice.Stage.generated.rawValue, preferred.rawValue) { row -> (UserID, DeviceID)? in
                guard let user: UserID = row.id(0), let device: DeviceID = row.id(1) else { return nil }
                return (user, device)
            }.first ?? nil
        }
    }

    /// Keeps `device` as its user's device if the user has none yet, and returns the one kept: the first writer wins,
    /// so a ghost never gets two devices.
    public func keepNewGhostDevice(_ device: StoredGhostDevice) throws -> StoredGhostDevice {
        try write { db in
            _ = try db.run("""
                INSERT INTO ghost_devices (user_id, device_id, stage, account, cross_signing) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (user_id) DO NOTHING
                """, device.user, device.device, device.stage.rawValue, SQLValue.blob(device.account), SQLValue.blob(device.crossSigning))
        }
        return try ghostDevice(device.user) ?? device
    }

    /// Records how far `user`'s device setup got, and its account as it now is (its keys marked published).
    public func updateGhostDevice(_ user: UserID, stage: StoredGhostDevice.Stage, account: [UInt8]) throws {
        try write { db in
            _ = try db.run("UPDATE ghost_devices SET stage = ?, account = ? WHERE user_id = ?", stage.rawValue, SQLValue.blob(account), user)
        }
    }
}
