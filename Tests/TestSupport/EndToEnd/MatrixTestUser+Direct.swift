import Foundation

extension MatrixTestUser {
    /// A pending invitation as `/sync` shows it: the room and its stripped state (`invite_state`).
    public struct Invitation: Sendable {
        public var room: String
        /// The stripped state events (`type`, `state_key`, `sender`, `content`).
        public var state: [[String: String]]
        /// `is_direct` of this user's invite member event.
        public var isDirect: Bool
        /// Who invited this user.
        public var inviter: String?
        /// The sender of `m.room.create` (the creator), when the homeserver includes it in the stripped state.
        public var creator: String?
    }

    /// Starts a direct chat with `user` as Matrix clients do ("Start chat"): a private room marked `is_direct`,
    /// inviting `user`. Returns the room id.
    public func createDirectRoom(inviting user: String) async throws -> String {
        let json = try await call("POST", "/_matrix/client/v3/createRoom",
                                  body: ["preset": "trusted_private_chat", "is_direct": true, "invite": [user]])
        return json["room_id"] as! String
    }

    /// The rooms this user is invited to now (an initial `GET /sync`, which answers at once whatever its `timeout`).
    public func invitations() async throws -> [Invitation] {
        // Synapse keeps a /sync answer for two minutes (`sync_response_cache_duration`) keyed by, among others, the
        // timeout: a timeout that differs on every call gets a fresh answer.
        let fresh = Int(Date().timeIntervalSince1970 * 1000) % 1_000_000
        let json = try await call("GET", "/_matrix/client/v3/sync?timeout=\(fresh)", body: nil)
        let invites = ((json["rooms"] as? [String: Any])?["invite"] as? [String: Any]) ?? [:]
        return invites.map { room, value in
            let events = (((value as? [String: Any])?["invite_state"] as? [String: Any])?["events"] as? [[String: Any]]) ?? []
            var state: [[String: String]] = []
            var isDirect = false
            var inviter: String?
            var creator: String?
            for event in events {
                let type = event["type"] as? String ?? ""
                let stateKey = event["state_key"] as? String ?? ""
                let sender = event["sender"] as? String ?? ""
                let content = event["content"] as? [String: Any] ?? [:]
                state.append(["type": type, "state_key": stateKey, "sender": sender])
                if type == "m.room.member", stateKey == userID {
                    isDirect = content["is_direct"] as? Bool ?? false
                    inviter = sender
                }
                if type == "m.room.create" { creator = sender }
            }
            return Invitation(room: room, state: state, isDirect: isDirect, inviter: inviter, creator: creator)
        }
    }
}
