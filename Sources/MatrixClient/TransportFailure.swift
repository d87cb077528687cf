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
