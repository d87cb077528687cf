/// A Matrix room id, `!opaque` (room version 12 ids have no `:server` part — never parse a server out of one).
public struct RoomID: StringIdentifier {
    public let rawValue: String

    /// Accepts `!` followed by at least one printable, non-space character (max 255 bytes).
    public init?(_ text: String) {
        guard text.hasPrefix("!"), text.utf8.count > 1, text.utf8.count <= 255, MatrixIdentifier.isPrintable(text) else { return nil }
        rawValue = text
    }
}

/// A Matrix room alias, `#localpart:server`.
public struct RoomAlias: StringIdentifier {
    public let rawValue: String
    public var localpart: String { String(rawValue.dropFirst().prefix(while: { $0 != ":" })) }
    public var server: String { String(rawValue.drop(while: { $0 != ":" }).dropFirst()) }

    public init?(_ text: String) {
        guard text.hasPrefix("#"), let colon = text.firstIndex(of: ":"), colon > text.index(after: text.startIndex),
              text.index(after: colon) < text.endIndex, text.utf8.count <= 255, MatrixIdentifier.isPrintable(text) else { return nil }
        rawValue = text
    }
}

/// A Matrix user id, `@localpart:server`. Historical localparts (any printable ASCII but `:`) are accepted when parsing.
public struct UserID: StringIdentifier {
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
}

/// A Matrix event id, `$opaque`.
public struct EventID: StringIdentifier {
    public let rawValue: String

    public init?(_ text: String) {
        guard text.hasPrefix("$"), text.utf8.count > 1, text.utf8.count <= 255, MatrixIdentifier.isPrintable(text) else { return nil }
        rawValue = text
    }
}

/// The homeserver's id of a transaction it pushes to the appservice (`PUT /_matrix/app/v1/transactions/{txnId}`).
/// Our own txnIds for idempotent sends are ``ClientTransactionID``s.
public struct TransactionID: StringIdentifier {
    public let rawValue: String

    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 255, MatrixIdentifier.isPrintable(text) else { return nil }
        rawValue = text
    }
}

/// Shared checks for the Matrix identifier types.
enum MatrixIdentifier {
    static func isPrintable(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.value < 0x21 || $0.value == 0x7f }
    }
}

/// Our txnId for an idempotent client-server send (`PUT /rooms/{roomId}/send/{eventType}/{txnId}`, redactions): the
/// homeserver returns the same event for the same id. Derived from what is being bridged, so a resend reuses it.
public struct ClientTransactionID: StringIdentifier {
    public let rawValue: String

    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 255, MatrixIdentifier.isPrintable(text) else { return nil }
        rawValue = text
    }
}
