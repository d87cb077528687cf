import Foundation
import Matrix

/// Rich messages through nio, as Element sends and shows them: any event (edits, replies, reactions) encrypted in an
/// encrypted room with its `m.relates_to` in the clear beside the ciphertext (spec §11.12.4.2; a reaction too, which
/// nio alone would send in the clear), redactions (never encrypted), and the room's timeline as nio decrypted it.
extension NioUser {
    /// A timeline event as nio saw it: for an encrypted one it could decrypt, the decrypted type and content.
    public struct TimelineEvent: Sendable, CustomStringConvertible {
        public var eventID: String
        public var sender: String
        /// The decrypted type (`m.room.message`, `m.reaction`…); `m.room.encrypted` when nio could not decrypt it.
        public var type: String
        /// The decrypted content, `m.relates_to` included (nio copies the clear one in when the ciphertext has none).
        public var content: JSONValue
        /// It came encrypted and nio decrypted it.
        public var decrypted: Bool
        /// A redaction of it came, or it came redacted.
        public var redacted: Bool

        /// `content.body`.
        public var body: String? { content["body"]?.stringValue }
        /// `content.m.relates_to.rel_type`.
        public var relationType: String? { content.at("m.relates_to", "rel_type")?.stringValue }
        /// `content.m.relates_to.event_id`.
        public var relatedEventID: String? { content.at("m.relates_to", "event_id")?.stringValue }
        /// `content.m.relates_to.m.in_reply_to.event_id`.
        public var inReplyTo: String? { content.at("m.relates_to", "m.in_reply_to", "event_id")?.stringValue }
        /// `content.m.relates_to.key` (reactions).
        public var reactionKey: String? { content.at("m.relates_to", "key")?.stringValue }
        public var description: String {
            "\(type) \(eventID) from \(sender)\(decrypted ? " (decrypted)" : "")\(redacted ? " (redacted)" : ""): \(content.jsonText)"
        }
    }

    /// Sends an event of `type` with `content` as it is, encrypted in an encrypted room. Returns its event id. Runs off
    /// the cooperative pool (syncs, may share a room key).
    @discardableResult
    public func sendEvent(_ type: String, content: [String: Any], to room: String) async throws -> String {
        try await child.callAsync("send_raw", ["room": room, "type": type, "content": content])["event_id"] as? String ?? ""
    }

    /// An edit (`m.replace`) of `eventID` as Element sends it: `body` is "* " + the new text, `m.new_content` the new text.
    @discardableResult
    public func edit(_ eventID: String, to newBody: String, in room: String) async throws -> String {
        try await sendEvent("m.room.message", content: [
            "msgtype": "m.text", "body": "* \(newBody)",
            "m.new_content": ["msgtype": "m.text", "body": newBody],
            "m.relates_to": ["rel_type": "m.replace", "event_id": eventID],
        ], to: room)
    }

    /// A reply (`m.relates_to.m.in_reply_to`) to `eventID`, without the legacy fallback (spec v1.13+).
    @discardableResult
    public func reply(_ body: String, to eventID: String, in room: String) async throws -> String {
        try await sendEvent("m.room.message", content: [
            "msgtype": "m.text", "body": body, "m.relates_to": ["m.in_reply_to": ["event_id": eventID]],
        ], to: room)
    }

    /// An `m.reaction` (annotation) with `key` on `eventID`, encrypted in an encrypted room as Element does.
    @discardableResult
    public func react(_ key: String, to eventID: String, in room: String) async throws -> String {
        try await sendEvent("m.reaction", content: ["m.relates_to": ["rel_type": "m.annotation", "event_id": eventID, "key": key]],
                            to: room)
    }

    /// Redacts `eventID` (a plain `m.room.redaction`: redactions are never encrypted). Returns the redaction's event id.
    @discardableResult
    public func redact(_ eventID: String, in room: String, reason: String? = nil) async throws -> String {
        var arguments: [String: Any] = ["room": room, "event_id": eventID]
        if let reason { arguments["reason"] = reason }
        return try await child.callAsync("redact", arguments)["event_id"] as? String ?? ""
    }

    /// Every timeline event nio saw in `room` (from `sender`, of one of `types`, when given), oldest first, once there
    /// are `count` (or the timeout passed). Runs off the cooperative pool (syncs until then).
    public func events(in room: String, from sender: String? = nil, types: [String]? = nil, count: Int = 1,
                       timeout: Int = 30) async throws -> [TimelineEvent] {
        var arguments: [String: Any] = ["room": room, "count": count, "timeout": timeout]
        if let sender { arguments["sender"] = sender }
        if let types { arguments["types"] = types }
        let answer = try await child.callAsync("events", arguments)
        return try (answer["events"] as? [[String: Any]] ?? []).map {
            TimelineEvent(eventID: $0["event_id"] as? String ?? "", sender: $0["sender"] as? String ?? "",
                          type: $0["type"] as? String ?? "", content: try JSONValue(jsonObject: $0["content"] ?? [String: Any]()),
                          decrypted: $0["decrypted"] as? Bool ?? false, redacted: $0["redacted"] as? Bool ?? false)
        }
    }

    /// The first timeline event in `room` that satisfies `matches`, waiting for it (``DeadlineExceeded`` after
    /// `timeout` seconds, naming `what` and what nio saw). Events are re-read each time nio's sync brings anything new
    /// (a redaction marks its target), and at least every few seconds (a late room key).
    public func event(in room: String, _ what: String, timeout: Int = 30,
                      where matches: (TimelineEvent) -> Bool) async throws -> TimelineEvent {
        let deadline = Date().addingTimeInterval(Double(timeout))
        var seen: [TimelineEvent] = []
        while true {
            if let found = seen.first(where: matches) { return found }
            let left = Int(deadline.timeIntervalSinceNow.rounded(.up))
            guard left > 0 else {
                throw DeadlineExceeded(what: "\(what) in \(room) (nio saw \(seen.suffix(12).map(\.description)))", seconds: Double(timeout))
            }
            seen = try await events(in: room, count: seen.count + 1, timeout: min(left, 5))
        }
    }

    /// Every timeline event in `room`, up to and including the first text message from `sender` whose body is `sentinel`
    /// (``DeadlineExceeded`` if it has not come within `timeout` seconds). Send the sentinel after everything else:
    /// anything doubled before it is then in the list.
    public func events(in room: String, untilBody sentinel: String, from sender: String, timeout: Int = 30) async throws -> [TimelineEvent] {
        let last = try await event(in: room, "\(sentinel.debugDescription) from \(sender)", timeout: timeout) {
            $0.sender == sender && $0.type == "m.room.message" && $0.body == sentinel
        }
        let all = try await events(in: room, count: 0, timeout: 0)
        guard let end = all.firstIndex(where: { $0.eventID == last.eventID }) else { return all }
        return Array(all[...end])
    }
}
