/// A Matrix room id, `!opaque` (room version 12 ids have no `:server` part — never parse a server out of one).
public struct RoomID: Sendable, Hashable, Codable, CustomStringConvertible, LosslessStringConvertible {
    public let rawValue: String

    /// Accepts `!` followed by at least one printable, non-space character (max 255 bytes).
    public init?(_ text: String) {
        guard text.hasPrefix("!"), text.utf8.count > 1, text.utf8.count <= 255, MatrixIdentifier.isPrintable(text) else { return nil }
        rawValue = text
    }

    public var description: String { rawValue }
    public init(from decoder: any Decoder) throws { self = try MatrixIdentifier.decode(decoder, RoomID.init) }
    public func encode(to encoder: any Encoder) throws { try MatrixIdentifier.encode(rawValue, encoder) }
}

/// A Matrix room alias, `#localpart:server`.
public struct RoomAlias: Sendable, Hashable, Codable, CustomStringConvertible, LosslessStringConvertible {
    public let rawValue: String
    public var localpart: String { String(rawValue.dropFirst().prefix(while: { $0 != ":" })) }
    public var server: String { String(rawValue.drop(while: { $0 != ":" }).dropFirst()) }

    public init?(_ text: String) {
        guard text.hasPrefix("#"), let colon = text.firstIndex(of: ":"), colon > text.index(after: text.startIndex),
              text.index(after: colon) < text.endIndex, text.utf8.count <= 255, MatrixIdentifier.isPrintable(text) else { return nil }
        rawValue = text
    }

    public var description: String { rawValue }
    public init(from decoder: any Decoder) throws { self = try MatrixIdentifier.decode(decoder, RoomAlias.init) }
    public func encode(to encoder: any Encoder) throws { try MatrixIdentifier.encode(rawValue, encoder) }
}

/// A Matrix user id, `@localpart:server`. Historical localparts (any printable ASCII but `:`) are accepted when parsing.
public struct UserID: Sendable, Hashable, Codable, CustomStringConvertible, LosslessStringConvertible {
    public let rawValue: String
    public var localpart: String { String(rawValue.dropFirst().prefix(while: { $0 != ":" })) }
    public var server: String { String(rawValue.drop(while: { $0 != ":" }).dropFirst()) }

    public init?(_ text: String) {
        guard text.hasPrefix("@"), let colon = text.firstIndex(of: ":"), colon > text.index(after: text.startIndex),
              text.index(after: colon) < text.endIndex, text.utf8.count <= 255, MatrixIdentifier.isPrintable(text) else { return nil }
        rawValue = text
    }

    /// `@localpart:server`; nil when the result is not a valid user id.
    public init?(localpart: String, server: String) { self.init("@\(localpart):\(server)") }

    public var description: String { rawValue }
    public init(from decoder: any Decoder) throws { self = try MatrixIdentifier.decode(decoder, UserID.init) }
    public func encode(to encoder: any Encoder) throws { try MatrixIdentifier.encode(rawValue, encoder) }
}

/// A Matrix event id, `$opaque`.
public struct EventID: Sendable, Hashable, Codable, CustomStringConvertible, LosslessStringConvertible {
    public let rawValue: String

    public init?(_ text: String) {
        guard text.hasPrefix("$"), text.utf8.count > 1, text.utf8.count <= 255, MatrixIdentifier.isPrintable(text) else { return nil }
        rawValue = text
    }

    public var description: String { rawValue }
    public init(from decoder: any Decoder) throws { self = try MatrixIdentifier.decode(decoder, EventID.init) }
    public func encode(to encoder: any Encoder) throws { try MatrixIdentifier.encode(rawValue, encoder) }
}

/// A transaction id: the homeserver's for pushes to the appservice, or ours for idempotent sends.
public struct TransactionID: Sendable, Hashable, Codable, CustomStringConvertible, LosslessStringConvertible {
    public let rawValue: String

    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 255, MatrixIdentifier.isPrintable(text) else { return nil }
        rawValue = text
    }

    public var description: String { rawValue }
    public init(from decoder: any Decoder) throws { self = try MatrixIdentifier.decode(decoder, TransactionID.init) }
    public func encode(to encoder: any Encoder) throws { try MatrixIdentifier.encode(rawValue, encoder) }
}

/// Shared checks and coding for the Matrix identifier types.
enum MatrixIdentifier {
    static func isPrintable(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.value < 0x21 || $0.value == 0x7f }
    }

    static func decode<T>(_ decoder: any Decoder, _ make: (String) -> T?) throws -> T {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = make(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "invalid identifier '\(text)'"))
        }
        return value
    }

    static func encode(_ text: String, _ encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}
