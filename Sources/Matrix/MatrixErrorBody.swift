/// The standard error body of the Matrix APIs, `{"errcode": …, "error": …}` (spec "API standards §2.3 Standard
/// error response"), plus `retry_after_ms` of `M_LIMIT_EXCEEDED` and `soft_logout` of `M_UNKNOWN_TOKEN`. Pure value,
/// `Codable` both ways.
public struct MatrixErrorBody: Sendable, Equatable, Codable {
    public var errcode: MatrixErrorCode
    public var error: String?
    public var retryAfterMilliseconds: Int64?
    /// With `M_UNKNOWN_TOKEN`: the session ended softly — log in again on the same device and keep local state (spec
    /// §"Soft logout"). Synapse says so for an access token that expired.
    public var softLogout: Bool?

    public init(errcode: MatrixErrorCode, error: String?, retryAfterMilliseconds: Int64? = nil, softLogout: Bool? = nil) {
        self.errcode = errcode
        self.error = error
        self.retryAfterMilliseconds = retryAfterMilliseconds
        self.softLogout = softLogout
    }

    enum CodingKeys: String, CodingKey {
        case errcode, error
        case retryAfterMilliseconds = "retry_after_ms"
        case softLogout = "soft_logout"
    }
}

/// A Matrix `errcode` (spec "API standards §2.3.1 Common error codes"). Any string is kept; the codes Isthmus sends or
/// reacts to are constants.
public struct MatrixErrorCode: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public static let forbidden: MatrixErrorCode = "M_FORBIDDEN"
    public static let unauthorized: MatrixErrorCode = "M_UNAUTHORIZED"
    public static let unknownToken: MatrixErrorCode = "M_UNKNOWN_TOKEN"
    public static let missingToken: MatrixErrorCode = "M_MISSING_TOKEN"
    public static let notJSON: MatrixErrorCode = "M_NOT_JSON"
    public static let badJSON: MatrixErrorCode = "M_BAD_JSON"
    public static let notFound: MatrixErrorCode = "M_NOT_FOUND"
    public static let unrecognized: MatrixErrorCode = "M_UNRECOGNIZED"
    public static let tooLarge: MatrixErrorCode = "M_TOO_LARGE"
    public static let invalidParameter: MatrixErrorCode = "M_INVALID_PARAM"
    public static let limitExceeded: MatrixErrorCode = "M_LIMIT_EXCEEDED"
    public static let unknown: MatrixErrorCode = "M_UNKNOWN"
    public static let userInUse: MatrixErrorCode = "M_USER_IN_USE"
    public static let exclusive: MatrixErrorCode = "M_EXCLUSIVE"
    public static let duplicateAnnotation: MatrixErrorCode = "M_DUPLICATE_ANNOTATION"
    public static let roomInUse: MatrixErrorCode = "M_ROOM_IN_USE"
    /// The account was deactivated (a login refused for good).
    public static let userDeactivated: MatrixErrorCode = "M_USER_DEACTIVATED"
    /// The account is locked by an administrator; with `soft_logout`, calls work again once it is unlocked.
    public static let userLocked: MatrixErrorCode = "M_USER_LOCKED"

    // Appservice ping failures (`POST /_matrix/client/v1/appservice/{appserviceId}/ping`, spec v1.7).
    /// The registration has no `url`.
    public static let urlNotSet: MatrixErrorCode = "M_URL_NOT_SET"
    /// The appservice answered the homeserver's ping with an error status.
    public static let badStatus: MatrixErrorCode = "M_BAD_STATUS"
    /// The homeserver could not connect to the appservice.
    public static let connectionFailed: MatrixErrorCode = "M_CONNECTION_FAILED"
    /// The appservice did not answer the homeserver in time.
    public static let connectionTimeout: MatrixErrorCode = "M_CONNECTION_TIMEOUT"
}
