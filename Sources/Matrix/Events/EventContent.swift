import IsthmusCommon

/// The typed content of a ``ClientEvent``, chosen by the event's `type`. Pure value.
///
/// Types Isthmus does not model arrive as ``unknown(type:content:)``; a known type whose content does not match
/// its schema arrives as ``malformed(type:content:reason:)`` so one bad event never fails a whole transaction.
public enum EventContent: Sendable, Equatable {
    case message(MessageContent)
    case member(MemberContent)
    case redaction(RedactionContent)
    case reaction(ReactionContent)
    case roomName(RoomNameContent)
    case roomTopic(RoomTopicContent)
    case roomAvatar(RoomAvatarContent)
    case powerLevels(PowerLevelsContent)
    case tombstone(TombstoneContent)
    /// A type Isthmus does not model, with its content as it came.
    case unknown(type: String, content: JSONValue)
    /// A known type whose content did not decode; `reason` says why.
    case malformed(type: String, content: JSONValue, reason: String)

    /// Decodes the content of an event of `type` from `container[key]`. A missing content reads as `{}`.
    static func decode<K: CodingKey>(type: String, from container: KeyedDecodingContainer<K>, key: K) throws -> EventContent {
        func typed<T: Decodable>(_: T.Type, _ wrap: (T) -> EventContent) throws -> EventContent {
            do {
                return wrap(try container.decode(T.self, forKey: key))
            } catch {
                let raw = (try? container.decodeIfPresent(JSONValue.self, forKey: key)) ?? .object([:])
                return .malformed(type: type, content: raw, reason: DecodingErrorSummary.describe(error))
            }
        }
        switch type {
        case MatrixEventType.message: return try typed(MessageContent.self, EventContent.message)
        case MatrixEventType.member: return try typed(MemberContent.self, EventContent.member)
        case MatrixEventType.redaction: return try typed(RedactionContent.self, EventContent.redaction)
        case MatrixEventType.reaction: return try typed(ReactionContent.self, EventContent.reaction)
        case MatrixEventType.roomName: return try typed(RoomNameContent.self, EventContent.roomName)
        case MatrixEventType.roomTopic: return try typed(RoomTopicContent.self, EventContent.roomTopic)
        case MatrixEventType.roomAvatar: return try typed(RoomAvatarContent.self, EventContent.roomAvatar)
        case MatrixEventType.powerLevels: return try typed(PowerLevelsContent.self, EventContent.powerLevels)
        case MatrixEventType.tombstone: return try typed(TombstoneContent.self, EventContent.tombstone)
        default:
            let raw = try container.decodeIfPresent(JSONValue.self, forKey: key) ?? .object([:])
            return .unknown(type: type, content: raw)
        }
    }

    /// Encodes the content (as it would be sent) into `container[key]`.
    func encode<K: CodingKey>(to container: inout KeyedEncodingContainer<K>, key: K) throws {
        switch self {
        case .message(let content): try container.encode(content, forKey: key)
        case .member(let content): try container.encode(content, forKey: key)
        case .redaction(let content): try container.encode(content, forKey: key)
        case .reaction(let content): try container.encode(content, forKey: key)
        case .roomName(let content): try container.encode(content, forKey: key)
        case .roomTopic(let content): try container.encode(content, forKey: key)
        case .roomAvatar(let content): try container.encode(content, forKey: key)
        case .powerLevels(let content): try container.encode(content, forKey: key)
        case .tombstone(let content): try container.encode(content, forKey: key)
        case .unknown(_, let content), .malformed(_, let content, _): try container.encode(content, forKey: key)
        }
    }
}

/// Short, stable descriptions of `DecodingError`s for logs (no payload data). Pure.
enum DecodingErrorSummary {
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(type(of: error))" }
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let base = path(context)
            return "missing '\(base.isEmpty ? key.stringValue : base + "." + key.stringValue)'"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "wrong type at '\(path(context))'"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not JSON" : "invalid value at '\(path(context))'"
        @unknown default:
            return "undecodable"
        }
    }
}
