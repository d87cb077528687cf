/// A stanza id assigned by a room or archive (XEP-0359 `<stanza-id id by>`), the key of MUC history.
public struct StanzaID: Sendable, Hashable, Codable, CustomStringConvertible, LosslessStringConvertible {
    public let rawValue: String
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 1024 else { return nil }
        rawValue = text
    }
    public var description: String { rawValue }
    public init(from decoder: any Decoder) throws { self = try MatrixIdentifier.decode(decoder, StanzaID.init) }
    public func encode(to encoder: any Encoder) throws { try MatrixIdentifier.encode(rawValue, encoder) }
}

/// A sender-chosen id (XEP-0359 `<origin-id id>`), passed through by the room unchanged.
public struct OriginID: Sendable, Hashable, Codable, CustomStringConvertible, LosslessStringConvertible {
    public let rawValue: String
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 1024 else { return nil }
        rawValue = text
    }
    public var description: String { rawValue }
    public init(from decoder: any Decoder) throws { self = try MatrixIdentifier.decode(decoder, OriginID.init) }
    public func encode(to encoder: any Encoder) throws { try MatrixIdentifier.encode(rawValue, encoder) }
}

/// A stable per-room id of a real user (XEP-0421 `<occupant-id id>`), added by the MUC.
public struct OccupantID: Sendable, Hashable, Codable, CustomStringConvertible, LosslessStringConvertible {
    public let rawValue: String
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 1024 else { return nil }
        rawValue = text
    }
    public var description: String { rawValue }
    public init(from decoder: any Decoder) throws { self = try MatrixIdentifier.decode(decoder, OccupantID.init) }
    public func encode(to encoder: any Encoder) throws { try MatrixIdentifier.encode(rawValue, encoder) }
}
