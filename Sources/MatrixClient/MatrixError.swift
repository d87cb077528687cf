import Matrix
/// Why a client-server API call failed: which call, which endpoint, what the homeserver said. Pure value.
public struct MatrixError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The family of failure.
    public enum Kind: Sendable, Equatable {
        /// The homeserver answered with an error status (see ``status`` and ``errcode``).
        case homeserver
        /// No answer: connection refused or reset, DNS… (after the retries).
        case transport
        /// No call can succeed as configured, so none was retried: the homeserver's certificate is not accepted
        /// (``message`` says "certificate of HOST not accepted: REASON"), TLS cannot be agreed, the URL is unusable.
        case unusable
        /// No answer within the call's timeout (after the retries).
        case timeout
        /// A 2xx answer whose body did not decode.
        case invalidResponse
        /// The request could not be built (e.g. content that does not encode).
        case invalidRequest
        /// The calling task was cancelled.
        case cancelled
    }

    public var kind: Kind
    /// The client method, e.g. `send`, `registerGhost`.
    public var call: MatrixCall
    /// Method and path template, e.g. `PUT /_matrix/client/v3/rooms/{roomId}/send/{eventType}/{txnId}`.
    public var endpoint: String
    /// The HTTP status, when there was an answer.
    public var status: Int?
    /// The Matrix `errcode`, when the answer had one.
    public var errcode: MatrixErrorCode?
    /// The homeserver's `error` text or a description of the failure.
    public var message: String
    /// How many attempts were made.
    public var attempts: Int
    /// The answer said `soft_logout: true` (with `M_UNKNOWN_TOKEN`): the session may be taken up again on its device.
    public var softLogout = false
    /// An OAuth 2.0 endpoint's `error` (RFC 6749 §5.2), when the answer was one of its refusals.
    public var oauthError: OAuthErrorCode?

    public init(kind: Kind, call: MatrixCall, endpoint: String, status: Int? = nil, errcode: MatrixErrorCode? = nil, message: String, attempts: Int) {
        self.kind = kind
        self.call = call
        self.endpoint = endpoint
        self.status = status
        self.errcode = errcode
        self.message = message
        self.attempts = attempts
    }

    public var description: String {
        var text = "\(call) (\(endpoint)) failed: "
        if let status { text += "HTTP \(status) " }
        if let errcode { text += "\(errcode) " }
        text += message
        if attempts > 1 { text += " (after \(attempts) attempts)" }
        return text
    }
}
