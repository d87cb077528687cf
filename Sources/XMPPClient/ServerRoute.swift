import Network

/// One connection attempt's way to the server: the candidates and how they were found, each one that did not take
/// the connection and why, and the one that did. ``ClientConnection/route`` keeps the latest for `isthmus doctor`. A value.
public struct ServerRoute: Sendable, Equatable {
    /// A candidate that did not take the TCP connection.
    public struct Failure: Sendable, Equatable, CustomStringConvertible {
        public var endpoint: ServerEndpoint
        public var error: NetworkError

        /// `host:port: why`.
        public var description: String {
            switch error {
            case .connectionRefused: "\(endpoint): connection refused"
            case .connectTimedOut: "\(endpoint): timed out"
            case .resolutionFailed(_, let reason): "\(endpoint): cannot resolve \(endpoint.host): \(reason)"
            default: "\(endpoint): \(error)"
            }
        }
    }

    /// The account's domain: whose SRV records were looked up, unless the source is ``ServerCandidates/Source/configured``.
    public var domain: String
    public var candidates: ServerCandidates
    /// In the order tried.
    public var failures: [Failure] = []
    /// The endpoint that took the connection; nil: none did.
    public var connected: ServerEndpoint?

    public init(domain: String, candidates: ServerCandidates) {
        self.domain = domain
        self.candidates = candidates
    }

    /// Why no connection was made: the domain's SRV records offer no service, or each failure in order.
    var unreachableReason: String {
        if case .noService(let lookupFailures) = candidates.source {
            return "the SRV records of \(domain) say it offers no XMPP client service (target '.')"
                + lookupFailures.map { "; \($0)" }.joined()
        }
        return failures.isEmpty ? "none tried: the connection is stopping" : failures.map(\.description).joined(separator: "; ")
    }
}
