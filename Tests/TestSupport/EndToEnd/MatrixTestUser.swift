import Foundation
import Matrix
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real Matrix user on the test bed's Synapse, driven over plain HTTP (independent of the bridge's own client).
public struct MatrixTestUser: Sendable {
    /// One timeline event as a test reads it.
    public struct Event: Sendable, CustomStringConvertible {
        public var type: String
        public var eventID: String
        public var sender: String
        public var stateKey: String?
        public var originServerTS: Int64
        /// The content's string members only; ``raw`` has the whole event.
        public var content: [String: String]
        /// The whole event as the server sent it (nested content, `unsigned`, relations).
        public var raw: JSONValue = .null
        public var body: String? { content["body"] }
        public var msgtype: String? { content["msgtype"] }
        public var description: String { "\(type) from \(sender): \(content)" }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var status: Int
        public var body: String
        public var description: String { "HTTP \(status): \(body)" }
    }

    public let userID: String
    public let accessToken: String
    public let baseURL: URL

    /// Logs in `localpart` with the test bed's password.
    public static func login(_ localpart: String, bed: TestBed) async throws -> MatrixTestUser {
        let body: [String: Any] = [
            "type": "m.login.password", "identifier": ["type": "m.id.user", "user": localpart], "password": bed.password,
        ]
        let json = try await request("POST", bed.synapseURL, "/_matrix/client/v3/login", token: nil, body: body)
        guard let token = json["access_token"] as? String, let user = json["user_id"] as? String else {
            throw Failure(status: 200, body: "login answer without token: \(json)")
        }
        return MatrixTestUser(userID: user, accessToken: token, baseURL: bed.synapseURL)
    }

    /// Creates a private room (invite-only) with an optional alias localpart, inviting `invite`; `additionalCreators`
    /// share the creator's unlimited power (room version 12, `creation_content.additional_creators`).
    public func createRoom(aliasLocalpart: String? = nil, name: String? = nil, invite: [String] = [],
                           additionalCreators: [String] = []) async throws -> String {
        var body: [String: Any] = ["preset": "private_chat", "invite": invite]
        if !additionalCreators.isEmpty { body["creation_content"] = ["additional_creators": additionalCreators] }
        if let aliasLocalpart { body["room_alias_name"] = aliasLocalpart }
        if let name { body["name"] = name }
        let json = try await call("POST", "/_matrix/client/v3/createRoom", body: body)
        return json["room_id"] as! String
    }

    /// Sends a message; returns its event id.
    @discardableResult
    public func send(_ body: String, to room: String, msgtype: String = "m.text", extra: [String: Any] = [:]) async throws -> String {
        var content: [String: Any] = ["msgtype": msgtype, "body": body]
        content.merge(extra) { _, new in new }
        let json = try await call("PUT", "/_matrix/client/v3/rooms/\(Self.encode(room))/send/m.room.message/\(UUID().uuidString)",
                                  body: content)
        return json["event_id"] as! String
    }

    public func invite(_ user: String, to room: String) async throws {
        _ = try await call("POST", "/_matrix/client/v3/rooms/\(Self.encode(room))/invite", body: ["user_id": user])
    }

    public func join(_ room: String) async throws {
        _ = try await call("POST", "/_matrix/client/v3/join/\(Self.encode(room))", body: [:])
    }

    public func leave(_ room: String) async throws {
        _ = try await call("POST", "/_matrix/client/v3/rooms/\(Self.encode(room))/leave", body: [:])
    }

    public func kick(_ user: String, from room: String, reason: String?) async throws {
        var body: [String: Any] = ["user_id": user]
        if let reason { body["reason"] = reason }
        _ = try await call("POST", "/_matrix/client/v3/rooms/\(Self.encode(room))/kick", body: body)
    }

    /// Sets this user's per-room displayname.
    public func setDisplayname(_ name: String, in room: String) async throws {
        _ = try await call("PUT", "/_matrix/client/v3/rooms/\(Self.encode(room))/state/m.room.member/\(Self.encode(userID))",
                           body: ["membership": "join", "displayname": name])
    }

    /// Sends a state event.
    public func setState(_ type: String, stateKey: String = "", content: [String: Any], in room: String) async throws {
        _ = try await call("PUT", "/_matrix/client/v3/rooms/\(Self.encode(room))/state/\(type)/\(Self.encode(stateKey))", body: content)
    }

    /// A state event's content, or nil when the room has none (404).
    public func state(_ type: String, stateKey: String = "", in room: String) async throws -> [String: Any]? {
        do {
            return try await call("GET", "/_matrix/client/v3/rooms/\(Self.encode(room))/state/\(type)/\(Self.encode(stateKey))", body: nil)
        } catch let failure as Failure where failure.status == 404 {
            return nil
        }
    }

    /// Gives `user` power level `level` in `room` (the rest of `m.room.power_levels` kept as it is).
    public func grantPower(_ level: Int, to user: String, in room: String) async throws {
        var content = try await state("m.room.power_levels", in: room) ?? [:]
        var users = content["users"] as? [String: Any] ?? [:]
        users[user] = level
        content["users"] = users
        try await setState("m.room.power_levels", content: content, in: room)
    }

    /// Upgrades `room` (`POST /rooms/{roomId}/upgrade`, spec §11.32); returns the replacement room's id.
    public func upgradeRoom(_ room: String, to version: String = "12") async throws -> String {
        let json = try await call("POST", "/_matrix/client/v3/rooms/\(Self.encode(room))/upgrade", body: ["new_version": version])
        return json["replacement_room"] as! String
    }

    /// Joined members with their per-room displaynames.
    public func members(of room: String) async throws -> [String: String?] {
        let json = try await call("GET", "/_matrix/client/v3/rooms/\(Self.encode(room))/joined_members", body: nil)
        var result: [String: String?] = [:]
        for (user, value) in (json["joined"] as? [String: Any]) ?? [:] {
            result[user] = (value as? [String: Any])?["display_name"] as? String
        }
        return result
    }

    /// The room's timeline, oldest first (up to 1,000 events).
    public func timeline(of room: String) async throws -> [Event] {
        let json = try await call("GET", "/_matrix/client/v3/rooms/\(Self.encode(room))/messages?dir=b&limit=1000", body: nil)
        let chunk = (json["chunk"] as? [[String: Any]]) ?? []
        return chunk.reversed().map { raw in
            var content: [String: String] = [:]
            for (key, value) in (raw["content"] as? [String: Any]) ?? [:] {
                if let text = value as? String { content[key] = text }
            }
            return Event(type: raw["type"] as? String ?? "", eventID: raw["event_id"] as? String ?? "",
                         sender: raw["sender"] as? String ?? "", stateKey: raw["state_key"] as? String,
                         originServerTS: (raw["origin_server_ts"] as? NSNumber)?.int64Value ?? 0, content: content,
                         raw: (try? JSONValue(jsonObject: raw)) ?? .null)
        }
    }

    /// Text messages in the room (m.room.message), oldest first.
    public func messages(in room: String) async throws -> [Event] {
        try await timeline(of: room).filter { $0.type == "m.room.message" }
    }

    func call(_ method: String, _ path: String, body: [String: Any]?) async throws -> [String: Any] {
        try await Self.request(method, baseURL, path, token: accessToken, body: body)
    }

    static func request(_ method: String, _ base: URL, _ path: String, token: String?, body: [String: Any]?) async throws -> [String: Any] {
        let data = try await requestData(method, base, path, token: token, body: body)
        return (try JSONSerialization.jsonObject(with: data.isEmpty ? Data("{}".utf8) : data) as? [String: Any]) ?? [:]
    }

    /// The answer's body as the homeserver wrote it (to verify signatures over it); throws ``Failure`` for a non-2xx.
    static func requestData(_ method: String, _ base: URL, _ path: String, token: String?, body: [String: Any]?) async throws -> Data {
        var request = URLRequest(url: URL(string: base.absoluteString + path)!)
        request.httpMethod = method
        request.timeoutInterval = 30
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else { throw Failure(status: status, body: String(decoding: data, as: UTF8.self)) }
        return data
    }

    static func encode(_ segment: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return segment.addingPercentEncoding(withAllowedCharacters: allowed) ?? segment
    }
}
