import IsthmusCommon

/// An ephemeral event pushed in a transaction's `ephemeral` list (appservice API "Pushing events", MSC2409;
/// needs `receive_ephemeral: true` in the registration). Pure value.
public enum EphemeralEvent: Sendable, Equatable, Codable {
    /// `m.typing`: the full set of users typing in the room now (spec §11.5).
    case typing(roomID: RoomID, userIDs: [UserID])
    /// `m.receipt`: read receipts in the room (spec §11.6).
    case receipts(roomID: RoomID, [Receipt])
    /// Any other ephemeral event (presence, unknown), as it came.
    case unknown(type: String, raw: JSONValue)

    enum CodingKeys: String, CodingKey {
        case type
        case roomID = "room_id"
        case content
    }

    private struct TypingContent: Codable {
        var userIDs: [String]
        enum CodingKeys: String, CodingKey { case userIDs = "user_ids" }
    }

    private struct ReceiptData: Codable {
        var ts: Int64?
        var threadID: String?
        enum CodingKeys: String, CodingKey {
            case ts
            case threadID = "thread_id"
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case MatrixEventType.typing:
            let roomID = try container.decode(RoomID.self, forKey: .roomID)
            let content = try container.decode(TypingContent.self, forKey: .content)
            self = .typing(roomID: roomID, userIDs: content.userIDs.compactMap(UserID.init))
        case MatrixEventType.receipt:
            let roomID = try container.decode(RoomID.self, forKey: .roomID)
            let content = try container.decode([String: [String: [String: ReceiptData]]].self, forKey: .content)
            var receipts: [Receipt] = []
            for (eventText, byType) in content {
                guard let eventID = EventID(eventText) else { continue }
                for (receiptType, byUser) in byType {
                    for (userText, data) in byUser {
                        guard let userID = UserID(userText) else { continue }
                        receipts.append(Receipt(eventID: eventID, receiptType: receiptType, userID: userID,
                                                timestamp: data.ts, threadID: data.threadID))
                    }
                }
            }
            receipts.sort { ($0.timestamp ?? 0, $0.userID.rawValue) < ($1.timestamp ?? 0, $1.userID.rawValue) }
            self = .receipts(roomID: roomID, receipts)
        default:
            self = .unknown(type: type, raw: try JSONValue(from: decoder))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .typing(let roomID, let userIDs):
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(MatrixEventType.typing, forKey: .type)
            try container.encode(roomID, forKey: .roomID)
            try container.encode(TypingContent(userIDs: userIDs.map(\.rawValue)), forKey: .content)
        case .receipts(let roomID, let receipts):
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(MatrixEventType.receipt, forKey: .type)
            try container.encode(roomID, forKey: .roomID)
            var content: [String: [String: [String: ReceiptData]]] = [:]
            for receipt in receipts {
                content[receipt.eventID.rawValue, default: [:]][receipt.receiptType, default: [:]][receipt.userID.rawValue] =
                    ReceiptData(ts: receipt.timestamp, threadID: receipt.threadID)
            }
            try container.encode(content, forKey: .content)
        case .unknown(_, let raw):
            try raw.encode(to: encoder)
        }
    }
}

/// One read receipt: `userID` has read up to `eventID` (spec §11.6). Pure value.
public struct Receipt: Sendable, Equatable, Codable {
    public var eventID: EventID
    /// `m.read` or `m.read.private` (private receipts reach only their sender's own appservice).
    public var receiptType: String
    public var userID: UserID
    /// Milliseconds since the epoch.
    public var timestamp: Int64?
    public var threadID: String?

    public init(eventID: EventID, receiptType: String, userID: UserID, timestamp: Int64?, threadID: String? = nil) {
        self.eventID = eventID
        self.receiptType = receiptType
        self.userID = userID
        self.timestamp = timestamp
        self.threadID = threadID
    }
}
