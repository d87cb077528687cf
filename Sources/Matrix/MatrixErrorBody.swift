/// The standard error body of the Matrix APIs, `{"errcode": …, "error": …}` (spec "API standards §2.3 Standard
/// error response"), plus `retry_after_ms` of `M_LIMIT_EXCEEDED`. Pure value, `Codable` both ways.
public struct MatrixErrorBody: Sendable, Equatable, Codable {
    public var errcode: String
    public var error: String?
    public var retryAfterMilliseconds: Int64?

    public init(errcode: String, error: String?, retryAfterMilliseconds: Int64? = nil) {
        self.errcode = errcode
        self.error = error
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    enum CodingKeys: String, CodingKey {
        case errcode, error
        case retryAfterMilliseconds = "retry_after_ms"
    }
}

/// Error codes Isthmus sends or reacts to (spec "API standards §2.3.1 Common error codes"). Constants only.
public enum MatrixErrorCode {
    public static let forbidden = "M_FORBIDDEN"
    public static let unauthorized = "M_UNAUTHORIZED"
    public static let unknownToken = "M_UNKNOWN_TOKEN"
    public static let missingToken = "M_MISSING_TOKEN"
    public static let notJSON = "M_NOT_JSON"
    public static let badJSON = "M_BAD_JSON"
    public static let notFound = "M_NOT_FOUND"
    public static let unrecognized = "M_UNRECOGNIZED"
    public static let tooLarge = "M_TOO_LARGE"
    public static let invalidParameter = "M_INVALID_PARAM"
    public static let limitExceeded = "M_LIMIT_EXCEEDED"
    public static let unknown = "M_UNKNOWN"
    public static let userInUse = "M_USER_IN_USE"
    public static let exclusive = "M_EXCLUSIVE"
    public static let roomInUse = "M_ROOM_IN_USE"
}
