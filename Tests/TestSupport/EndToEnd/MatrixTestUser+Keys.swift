import Foundation

extension MatrixTestUser {
    /// Starts an end-to-end encrypted direct chat with `user` as Element does: `trusted_private_chat`, `is_direct`, and
    /// `m.room.encryption` (Megolm) in the initial state. Returns the room id.
    public func createEncryptedDirectRoom(inviting user: String) async throws -> String {
        let json = try await call("POST", "/_matrix/client/v3/createRoom", body: [
            "preset": "trusted_private_chat", "is_direct": true, "invite": [user],
            "initial_state": [["type": "m.room.encryption", "state_key": "", "content": ["algorithm": "m.megolm.v1.aes-sha2"]]],
        ])
        return json["room_id"] as! String
    }

    /// `POST /keys/query` for every device of `users`, the answer as the homeserver wrote it.
    public func queryKeys(of users: [String]) async throws -> Data {
        try await Self.requestData("POST", baseURL, "/_matrix/client/v3/keys/query", token: accessToken,
                                   body: ["device_keys": Dictionary(uniqueKeysWithValues: users.map { ($0, [String]()) })])
    }

    /// `POST /keys/claim` of one `signed_curve25519` key of `user`'s `device`, the answer as the homeserver wrote it.
    public func claimOneTimeKey(of user: String, device: String) async throws -> Data {
        try await Self.requestData("POST", baseURL, "/_matrix/client/v3/keys/claim", token: accessToken,
                                   body: ["one_time_keys": [user: [device: "signed_curve25519"]]])
    }
}
