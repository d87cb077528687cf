import Foundation

/// One HTTP request as ``CurlTransport`` sends it. Pure value.
struct HTTPRequest: Sendable {
    var method: String
    /// The whole URL, path and query already percent-encoded.
    var url: String
    var headers: [(String, String)]
    var body: Data?
    /// The deadline of the whole exchange (connecting included).
    var timeout: Duration
    /// False for a request that must not be sent twice (a POST that creates something): it gets a connection of its
    /// own, because libcurl silently sends a request again when a *reused* connection dies before any answer byte.
    var mayReuseConnection = true
}

/// One answer. Pure value.
struct HTTPResponse: Sendable {
    var status: Int
    /// The headers the client reads (`retry-after`), names lowercased.
    var headers: [String: String]
    var body: Data
    /// The HTTP version the answer came in: `1.1` or `2`.
    var httpVersion: String
}

/// Why there is no answer, in the classes the retry policy needs.
enum TransportFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// No connection was made (nothing listens, the name does not resolve): the request was certainly not processed.
    case connectFailed(String)
    /// No complete answer within the request's timeout.
    case timedOut(String)
    /// The connection broke after the request may have reached the server.
    case broken(String)
    /// No request can succeed as configured: the server's certificate is not accepted, TLS cannot be agreed, the URL
    /// or an option is unusable. Retrying does not help; an operator must act.
    case unusable(String)
    /// The calling task was cancelled.
    case cancelled

    var description: String {
        switch self {
        case .connectFailed(let reason): "cannot connect: \(reason)"
        case .timedOut(let reason): "timed out: \(reason)"
        case .broken(let reason), .unusable(let reason): reason
        case .cancelled: "cancelled"
        }
    }
}
