/// What a device publishes with `/keys/upload` (client-server API §11.12.2 "Device keys", "One-time and fallback
/// keys"): its signed device keys, signed one-time keys and signed fallback key, as canonical JSON objects.
extension OlmAccount {
    /// The algorithms this implementation speaks, as a device advertises them.
    public static let algorithms = [MatrixAlgorithm.olm, MatrixAlgorithm.megolm]

    /// The device keys object of `deviceID` for `userID`, signed by this device's fingerprint key.
    public func deviceKeys(userID: String, deviceID: String) throws -> CanonicalJSON {
        let keys: CanonicalJSON = .object([
            "user_id": .string(userID),
            "device_id": .string(deviceID),
            "algorithms": .array(Self.algorithms.map(CanonicalJSON.string)),
            "keys": .object(["curve25519:\(deviceID)": .string(curve25519Key.base64),
                             "ed25519:\(deviceID)": .string(ed25519Key.base64)]),
        ])
        return try sign(keys, userID: userID, deviceID: deviceID)
    }

    /// The unpublished one-time keys as `signed_curve25519:<id>` → a signed key object.
    public func signedOneTimeKeys(userID: String, deviceID: String) throws -> [String: CanonicalJSON] {
        try signedKeys(unpublishedOneTimeKeys, fallback: false, userID: userID, deviceID: deviceID)
    }

    /// The unpublished fallback key (none or one) as `signed_curve25519:<id>` → a signed key object marked `fallback`.
    public func signedFallbackKey(userID: String, deviceID: String) throws -> [String: CanonicalJSON] {
        try signedKeys(unpublishedFallbackKey, fallback: true, userID: userID, deviceID: deviceID)
    }

    private func signedKeys(_ keys: [String: Curve25519PublicKey], fallback: Bool, userID: String,
                            deviceID: String) throws -> [String: CanonicalJSON] {
        var signed: [String: CanonicalJSON] = [:]
        for (id, key) in keys {
            var members: [String: CanonicalJSON] = ["key": .string(key.base64)]
            if fallback { members["fallback"] = .bool(true) }
            signed["\(MatrixAlgorithm.signedCurve25519):\(id)"] = try sign(.object(members), userID: userID, deviceID: deviceID)
        }
        return signed
    }
}
