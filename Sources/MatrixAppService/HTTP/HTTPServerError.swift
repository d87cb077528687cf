/// Why ``HTTPServer`` could not start.
public enum HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The listen address did not resolve.
    case unresolvableHost(String)
    /// Binding or listening failed (`reason` is the system's message, e.g. "Address already in use").
    case bindFailed(host: String, port: Int, errno: Int32, reason: String)
    /// libmicrohttpd refused to start its daemon.
    case daemonStartFailed(host: String, port: Int)

    public var description: String {
        switch self {
        case .unresolvableHost(let host): "cannot resolve listen host '\(host)'"
        case .bindFailed(let host, let port, _, let reason): "cannot listen on \(host):\(port): \(reason)"
        case .daemonStartFailed(let host, let port): "libmicrohttpd could not start on \(host):\(port)"
        }
    }

    /// Whether another process already listens on the address.
    public var isAddressInUse: Bool {
        if case .bindFailed(_, _, let code, _) = self { return code == 98 /* EADDRINUSE */ }
        return false
    }
}
