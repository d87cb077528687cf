import Foundation

/// Files through nio: sent as Element sends them (in an encrypted room as Matrix spec "Sending encrypted attachments"
/// says, AES-256-CTR ciphertext uploaded and the key in the event's `file`), and received ones downloaded and decrypted.
extension NioUser {
    /// A media message (`m.image`, `m.file`, `m.audio`, `m.video`) as nio received it, with its file downloaded.
    public struct Media: Sendable, Equatable {
        public var sender: String
        public var eventID: String
        public var msgtype: String
        public var body: String
        /// The event came encrypted (`m.room.encrypted`) and nio decrypted it.
        public var decrypted: Bool
        /// Its content had `file` (an encrypted attachment).
        public var encryptedFile: Bool
        /// Its content had `url` (a plain attachment).
        public var plainURL: Bool
        /// The file's bytes: downloaded from the homeserver and, for `file`, decrypted with its key after its SHA-256
        /// was checked. Nil when that failed (`error` says why).
        public var data: Data?
        /// The bytes stored on the homeserver are `data` as they are (true for a plain attachment, false when encrypted).
        public var ciphertextEqualsPlaintext: Bool
        /// Why the download or the decryption failed.
        public var error: String?
    }

    /// Uploads `data` and sends it to `room` as an `m.image` (an `image/` mimetype) or `m.file`, `msgtype` overriding;
    /// the body is `name`, or `caption` (then `filename` is `name`). In an encrypted room the upload is ciphertext and
    /// the event has `file` instead of `url`. Returns the event id. Runs off the cooperative pool (uploads, then syncs).
    @discardableResult
    public func sendFile(_ data: Data, name: String, mimetype: String, msgtype: String? = nil, caption: String? = nil,
                         to room: String) async throws -> String {
        var arguments: [String: Any] = ["room": room, "data": data.base64EncodedString(), "name": name, "mimetype": mimetype]
        if let msgtype { arguments["msgtype"] = msgtype }
        if let caption { arguments["body"] = caption }
        return try await child.callAsync("send_file", arguments)["event_id"] as? String ?? ""
    }

    /// The media messages from `sender` in `room`, once there are `count` (or the timeout passed), each file downloaded
    /// and decrypted. Runs off the cooperative pool (syncs and downloads).
    public func media(in room: String, from sender: String, count: Int = 1, timeout: Int = 30) async throws -> [Media] {
        let answer = try await child.callAsync("media", ["room": room, "sender": sender, "count": count, "timeout": timeout])
        return (answer["media"] as? [[String: Any]] ?? []).map {
            Media(sender: $0["sender"] as? String ?? "", eventID: $0["event_id"] as? String ?? "",
                  msgtype: $0["msgtype"] as? String ?? "", body: $0["body"] as? String ?? "",
                  decrypted: $0["decrypted"] as? Bool ?? false, encryptedFile: $0["encrypted_file"] as? Bool ?? false,
                  plainURL: $0["plain_url"] as? Bool ?? false, data: ($0["data"] as? String).flatMap { Data(base64Encoded: $0) },
                  ciphertextEqualsPlaintext: $0["ciphertext_equals_plaintext"] as? Bool ?? false, error: $0["error"] as? String)
        }
    }
}
