import Foundation
import Matrix

/// Rich messages from a Matrix test user: any content, relations, reactions, redactions, and raw events.
extension MatrixTestUser {
    /// Sends an event of `type` with `content`; returns its event id.
    @discardableResult
    public func sendEvent(_ type: String, content: [String: Any], to room: String) async throws -> String {
        let json = try await call("PUT", "/_matrix/client/v3/rooms/\(Self.encode(room))/send/\(Self.encode(type))/\(UUID().uuidString)",
                                  body: content)
        return json["event_id"] as! String
    }

    /// A reply (`m.relates_to.m.in_reply_to`) without the legacy fallback (spec v1.13+); `extra` is merged into the content.
    @discardableResult
    public func reply(_ body: String, to eventID: String, in room: String, extra: [String: Any] = [:]) async throws -> String {
        var content: [String: Any] = ["msgtype": "m.text", "body": body, "m.relates_to": ["m.in_reply_to": ["event_id": eventID]]]
        content.merge(extra) { _, new in new }
        return try await sendEvent("m.room.message", content: content, to: room)
    }

    /// An edit (`m.replace`) of `eventID`: `body` is "* " + the new text, `m.new_content` the new text.
    @discardableResult
    public func edit(_ eventID: String, to newBody: String, in room: String) async throws -> String {
        try await sendEvent("m.room.message", content: [
            "msgtype": "m.text", "body": "* \(newBody)",
            "m.new_content": ["msgtype": "m.text", "body": newBody],
            "m.relates_to": ["rel_type": "m.replace", "event_id": eventID],
        ], to: room)
    }

    /// An `m.reaction` (annotation) with `key` on `eventID`.
    @discardableResult
    public func react(_ key: String, to eventID: String, in room: String) async throws -> String {
        try await sendEvent("m.reaction", content: ["m.relates_to": ["rel_type": "m.annotation", "event_id": eventID, "key": key]],
                            to: room)
    }

    /// Redacts `eventID` (PUT /rooms/{room}/redact/{event}/{txn}); returns the redaction's event id.
    @discardableResult
    public func redact(_ eventID: String, in room: String, reason: String? = nil) async throws -> String {
        var body: [String: Any] = [:]
        if let reason { body["reason"] = reason }
        let json = try await call(
            "PUT", "/_matrix/client/v3/rooms/\(Self.encode(room))/redact/\(Self.encode(eventID))/\(UUID().uuidString)", body: body)
        return json["event_id"] as! String
    }

    /// One event as raw JSON (GET /rooms/{room}/event/{id}).
    public func event(_ eventID: String, in room: String) async throws -> JSONValue {
        let json = try await call("GET", "/_matrix/client/v3/rooms/\(Self.encode(room))/event/\(Self.encode(eventID))", body: nil)
        return try JSONValue(jsonObject: json)
    }

    /// Whether `eventID` has been redacted: the server then serves it with `unsigned.redacted_because` and no content.
    public func isRedacted(_ eventID: String, in room: String) async throws -> Bool {
        let event = try await event(eventID, in: room)
        return event.at("unsigned", "redacted_because") != nil || event["content"]?.objectValue?.isEmpty == true
    }
}
