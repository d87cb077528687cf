import Foundation
import Matrix

/// Typing and read receipts from a Matrix test user, and the room's ephemeral state as `/sync` shows it.
extension MatrixTestUser {
    /// Shows (for `timeoutMilliseconds`) or clears this user's typing notice in `room`.
    public func setTyping(_ typing: Bool, in room: String, timeoutMilliseconds: Int = 30_000) async throws {
        var body: [String: Any] = ["typing": typing]
        if typing { body["timeout"] = timeoutMilliseconds }
        _ = try await call("PUT", "/_matrix/client/v3/rooms/\(Self.encode(room))/typing/\(Self.encode(userID))", body: body)
    }

    /// Sends a receipt of `type` (`m.read`, `m.read.private`) on `eventID`.
    public func sendReceipt(_ type: String = "m.read", on eventID: String, in room: String) async throws {
        _ = try await call("POST", "/_matrix/client/v3/rooms/\(Self.encode(room))/receipt/\(type)/\(Self.encode(eventID))", body: [:])
    }

    /// The room's ephemeral events (`m.typing`, `m.receipt`) in an initial `/sync` limited to `room`: the users typing
    /// now and every receipt the homeserver holds.
    public func ephemeral(in room: String) async throws -> [JSONValue] {
        let filter = #"{"room":{"rooms":["\#(room)"],"timeline":{"limit":1},"state":{"lazy_load_members":true}},"presence":{"not_types":["*"]},"account_data":{"not_types":["*"]}}"#
        // Synapse caches a /sync answer for two minutes (`sync_response_cache_duration`) by user, timeout, since and
        // filter; an initial sync ignores its timeout, so a fresh one makes every poll see the present.
        let bust = Int.random(in: 1...1_000_000_000)
        let json = try await call("GET", "/_matrix/client/v3/sync?timeout=\(bust)&filter=\(Self.encode(filter))", body: nil)
        let joined = (json["rooms"] as? [String: Any])?["join"] as? [String: Any]
        let events = ((joined?[room] as? [String: Any])?["ephemeral"] as? [String: Any])?["events"] as? [[String: Any]] ?? []
        return events.compactMap { try? JSONValue(jsonObject: $0) }
    }

    /// Who is typing in `room` now.
    public func typingUsers(in room: String) async throws -> Set<String> {
        let typing = try await ephemeral(in: room).first { $0.at("type")?.stringValue == "m.typing" }
        return Set(typing?.at("content", "user_ids")?.arrayValue?.compactMap(\.stringValue) ?? [])
    }

    /// The event `user`'s public read receipt in `room` is on, if any.
    public func readReceipt(of user: String, in room: String) async throws -> String? {
        for event in try await ephemeral(in: room) where event.at("type")?.stringValue == "m.receipt" {
            guard case .object(let content)? = event.at("content") else { continue }
            for (eventID, receipts) in content where receipts.at("m.read", user) != nil { return eventID }
        }
        return nil
    }
}
