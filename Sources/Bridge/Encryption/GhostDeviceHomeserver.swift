import IsthmusCommon
import Matrix
import MatrixClient
import MatrixCrypto

/// What ``GhostDevices`` asks of the homeserver: the appservice's device and key calls, acting as a ghost. The key
/// objects are signed canonical JSON. ``MatrixClient`` is the real one; tests record the calls.
protocol GhostDeviceHomeserver: Sendable {
    func createDevice(_ device: DeviceID, of user: UserID, displayName: String) async throws
    func publishKeys(device keys: CanonicalJSON?, oneTime: [String: CanonicalJSON], fallback: [String: CanonicalJSON],
                     of user: UserID, device: DeviceID) async throws
    func publishCrossSigning(master: CanonicalJSON, selfSigning: CanonicalJSON, userSigning: CanonicalJSON, of user: UserID) async throws
    func publishSignature(of device: DeviceID, signed: CanonicalJSON, by user: UserID) async throws

    // Sending encrypted (``GhostDevices`` `encrypt`), acting as the ghost:
    /// The room's `m.room.encryption` content, nil when the room is not encrypted.
    func roomEncryption(of room: RoomID, as ghost: UserID) async throws -> JSONValue?
    /// The members a room key goes to (``GhostDevices/keyRecipients(_:historyVisibility:)``).
    func memberIDs(of room: RoomID, as ghost: UserID) async throws -> [UserID]
    /// `/keys/query` of `users`: the answer's `device_keys`.
    func deviceKeys(of users: [UserID], as ghost: UserID) async throws -> JSONValue
    /// `/keys/claim` of one `signed_curve25519` key per device: the answer's `one_time_keys`.
    func claimOneTimeKeys(_ devices: [UserID: [DeviceID]], as ghost: UserID) async throws -> JSONValue
    /// `PUT /sendToDevice/{kind}/{txnId}`.
    func sendToDevices(_ messages: [UserID: [DeviceID: JSONValue]], kind: ToDeviceKind, transactionID: ClientTransactionID,
                       as ghost: UserID) async throws
}

/// The to-device messages the ghosts' devices send.
enum ToDeviceKind: String, Sendable {
    /// Olm-encrypted: a room key (`m.room_key` inside).
    case encrypted = "m.room.encrypted"
    /// A room key not sent to a device, and why (spec §11.12.5.2 "Reporting that decryption keys are withheld").
    case withheld = "m.room_key.withheld"
    /// A request for a missing room key (spec §11.12.5.1 "Key requests").
    case keyRequest = "m.room_key_request"
}

extension MatrixClient: GhostDeviceHomeserver {
    func publishKeys(device keys: CanonicalJSON?, oneTime: [String: CanonicalJSON], fallback: [String: CanonicalJSON],
                     of user: UserID, device: DeviceID) async throws {
        _ = try await uploadKeys(deviceKeys: keys.map(JSONValue.init), oneTimeKeys: oneTime.mapValues(JSONValue.init),
                                 fallbackKeys: fallback.mapValues(JSONValue.init), of: user, device: device)
    }

    func publishCrossSigning(master: CanonicalJSON, selfSigning: CanonicalJSON, userSigning: CanonicalJSON, of user: UserID) async throws {
        try await uploadCrossSigningKeys(master: JSONValue(master), selfSigning: JSONValue(selfSigning),
                                         userSigning: JSONValue(userSigning), of: user)
    }

    func publishSignature(of device: DeviceID, signed: CanonicalJSON, by user: UserID) async throws {
        try await uploadSignatures([user: [device.rawValue: JSONValue(signed)]], by: user)
    }

    func roomEncryption(of room: RoomID, as ghost: UserID) async throws -> JSONValue? {
        try await stateEvent(JSONValue.self, type: MatrixEventType.encryption, in: room, as: ghost)
    }

    func memberIDs(of room: RoomID, as ghost: UserID) async throws -> [UserID] {
        let members = try await joinedAndInvitedMembers(of: room, as: ghost)
        guard members.values.contains(.invite) else { return Array(members.keys) }
        let visibility = try await stateEvent(JSONValue.self, type: MatrixEventType.historyVisibility, in: room, as: ghost)
        return GhostDevices.keyRecipients(members, historyVisibility: visibility?["history_visibility"]?.stringValue)
    }

    func deviceKeys(of users: [UserID], as ghost: UserID) async throws -> JSONValue {
        try await queryKeys(users, as: ghost)["device_keys"] ?? .object([:])
    }

    func claimOneTimeKeys(_ devices: [UserID: [DeviceID]], as ghost: UserID) async throws -> JSONValue {
        try await claimKeys(devices, as: ghost)
    }

    func sendToDevices(_ messages: [UserID: [DeviceID: JSONValue]], kind: ToDeviceKind, transactionID: ClientTransactionID,
                       as ghost: UserID) async throws {
        try await sendToDevice(messages, type: kind.rawValue, transactionID: transactionID, as: ghost)
    }
}
