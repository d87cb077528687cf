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
}

extension JSONValue {
    /// A canonical JSON value as the Matrix client's JSON (the same value: canonical JSON has no floats).
    init(_ canonical: CanonicalJSON) {
        switch canonical {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .integer(let value): self = .integer(value)
        case .string(let value): self = .string(value)
        case .array(let values): self = .array(values.map(JSONValue.init))
        case .object(let members): self = .object(members.mapValues(JSONValue.init))
        }
    }
}
