import FoundationEssentials
import IsthmusCommon
import Matrix

/// End-to-end encryption's device and key endpoints (client-server API §11.12.2 "Key management API", and the
/// appservice's device management, MSC4190 / spec v1.17 "Device management" for appservices), acting as the bridge's
/// users. The key objects are the caller's (signed canonical JSON): this client only carries them.
extension MatrixClient {
    /// Creates (or renames) `user`'s device `device` as the appservice (`PUT /devices/{deviceId}?user_id=`; Synapse
    /// answers 201 for a new device, 200 for an existing one). Repeating it changes nothing.
    public func createDevice(_ device: DeviceID, of user: UserID, displayName: String) async throws(MatrixError) {
        struct Body: Encodable {
            var displayName: String
            enum CodingKeys: String, CodingKey { case displayName = "display_name" }
        }
        let body = try json(Body(displayName: displayName), call: .createDevice)
        let _: Bodies.Empty = try await perform(ClientRequest(
            .createDevice, "PUT", ["_matrix/client/v3/devices", .param("deviceId", device)], query: acting(user), body: body))
    }

    /// Publishes `device`'s keys as `user` (`POST /keys/upload?user_id=&device_id=`, the device masqueraded as MSC4326
    /// says): its device keys, one-time keys and fallback keys, any of them empty. Returns the server's count of
    /// unclaimed one-time keys by algorithm. Uploading the same keys again is accepted.
    public func uploadKeys(deviceKeys: JSONValue?, oneTimeKeys: [String: JSONValue], fallbackKeys: [String: JSONValue],
                           of user: UserID, device: DeviceID) async throws(MatrixError) -> [String: Int] {
        struct Body: Encodable {
            var deviceKeys: JSONValue?
            var oneTimeKeys: [String: JSONValue]?
            var fallbackKeys: [String: JSONValue]?
            enum CodingKeys: String, CodingKey {
                case deviceKeys = "device_keys", oneTimeKeys = "one_time_keys", fallbackKeys = "fallback_keys"
            }
        }
        struct Response: Decodable {
            var counts: [String: Int]?
            enum CodingKeys: String, CodingKey { case counts = "one_time_key_counts" }
        }
        let body = try json(Body(deviceKeys: deviceKeys, oneTimeKeys: oneTimeKeys.isEmpty ? nil : oneTimeKeys,
                                 fallbackKeys: fallbackKeys.isEmpty ? nil : fallbackKeys), call: .uploadKeys)
        return try await perform(ClientRequest(.uploadKeys, "POST", ["_matrix/client/v3/keys/upload"],
                                               query: acting(user) + [("device_id", device.rawValue)], body: body),
                                 as: Response.self).counts ?? [:]
    }

    /// Publishes `user`'s cross-signing keys (`POST /keys/device_signing/upload?user_id=`). An appservice's user needs
    /// no interactive authentication, for the first upload nor for a replacing one (Synapse since 1.141).
    public func uploadCrossSigningKeys(master: JSONValue, selfSigning: JSONValue, userSigning: JSONValue,
                                       of user: UserID) async throws(MatrixError) {
        struct Body: Encodable {
            var master: JSONValue
            var selfSigning: JSONValue
            var userSigning: JSONValue
            enum CodingKeys: String, CodingKey {
                case master = "master_key", selfSigning = "self_signing_key", userSigning = "user_signing_key"
            }
        }
        let body = try json(Body(master: master, selfSigning: selfSigning, userSigning: userSigning), call: .uploadCrossSigningKeys)
        let _: Bodies.Empty = try await perform(ClientRequest(
            .uploadCrossSigningKeys, "POST", ["_matrix/client/v3/keys/device_signing/upload"], query: acting(user), body: body))
    }

    /// Publishes signatures `user` made (`POST /keys/signatures/upload?user_id=`): by signed user, by key or device
    /// id, the signed object. A signature the server refuses comes back in `failures`, which this turns into an error
    /// (`M_INVALID_SIGNATURE` and the like), naming the first.
    public func uploadSignatures(_ signed: [UserID: [String: JSONValue]], by user: UserID) async throws(MatrixError) {
        struct Failure: Decodable {
            var errcode: String?
            var error: String?
        }
        struct Response: Decodable { var failures: [String: [String: Failure]]? }
        let body = try json(Dictionary(uniqueKeysWithValues: signed.map { ($0.key.rawValue, $0.value) }), call: .uploadSignatures)
        let request = ClientRequest(.uploadSignatures, "POST", ["_matrix/client/v3/keys/signatures/upload"], query: acting(user), body: body)
        let response = try await perform(request, as: Response.self)
        if let (signedUser, failures) = response.failures?.first(where: { !$0.value.isEmpty }), let (key, failure) = failures.first {
            throw MatrixError(kind: .homeserver, call: .uploadSignatures, endpoint: request.endpoint, status: 200,
                              errcode: failure.errcode.map(MatrixErrorCode.init(rawValue:)),
                              message: "the homeserver refused the signature of \(signedUser)'s \(key): \(failure.error ?? "no reason given")",
                              attempts: 1)
        }
    }

    /// The published keys of `users` (`POST /keys/query`), as the homeserver returns them: `device_keys`,
    /// `master_keys`, `self_signing_keys`, `user_signing_keys` and `failures`.
    public func queryKeys(_ users: [UserID], as user: UserID? = nil) async throws(MatrixError) -> JSONValue {
        struct Body: Encodable {
            var deviceKeys: [String: [String]]
            enum CodingKeys: String, CodingKey { case deviceKeys = "device_keys" }
        }
        let body = try json(Body(deviceKeys: Dictionary(uniqueKeysWithValues: users.map { ($0.rawValue, []) })), call: .queryKeys)
        return try await perform(ClientRequest(.queryKeys, "POST", ["_matrix/client/v3/keys/query"], query: acting(user), body: body,
                                               retry: .full), as: JSONValue.self)
    }

    /// Claims one key of `algorithm` for each listed device (`POST /keys/claim`), acting as `user`: the answer's
    /// `one_time_keys`, by user, device and key id (a device with none left answers its fallback key, or nothing).
    public func claimKeys(_ devices: [UserID: [DeviceID]], algorithm: String = "signed_curve25519",
                          as user: UserID? = nil) async throws(MatrixError) -> JSONValue {
        struct Body: Encodable {
            var oneTimeKeys: [String: [String: String]]
            enum CodingKeys: String, CodingKey { case oneTimeKeys = "one_time_keys" }
        }
        let wanted = Dictionary(uniqueKeysWithValues: devices.map { user, ids in
            (user.rawValue, Dictionary(uniqueKeysWithValues: ids.map { ($0.rawValue, algorithm) }))
        })
        let body = try json(Body(oneTimeKeys: wanted), call: .claimKeys)
        let answer = try await perform(ClientRequest(.claimKeys, "POST", ["_matrix/client/v3/keys/claim"], query: acting(user), body: body),
                                       as: JSONValue.self)
        return answer["one_time_keys"] ?? .object([:])
    }

    /// Sends to-device messages of `type` (`PUT /sendToDevice/{eventType}/{txnId}`), acting as `user`: by recipient
    /// user and device id, each message's content. The transaction id makes a repeat harmless.
    public func sendToDevice(_ messages: [UserID: [DeviceID: JSONValue]], type: String, transactionID: ClientTransactionID,
                             as user: UserID? = nil) async throws(MatrixError) {
        struct Body: Encodable { var messages: [String: [String: JSONValue]] }
        let body = try json(Body(messages: Dictionary(uniqueKeysWithValues: messages.map { user, devices in
            (user.rawValue, Dictionary(uniqueKeysWithValues: devices.map { ($0.key.rawValue, $0.value) }))
        })), call: .sendToDevice)
        let _: Bodies.Empty = try await perform(ClientRequest(
            .sendToDevice, "PUT", ["_matrix/client/v3/sendToDevice", .param("eventType", type), .param("txnId", transactionID)],
            query: acting(user), body: body))
    }
}
