#if canImport(Glibc)
import Glibc
#endif

/// Why a TCP operation failed.
public enum NetworkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing listens on host:port.
    case connectionRefused(host: String, port: Int)
    /// The host name did not resolve.
    case resolutionFailed(host: String, reason: String)
    /// Connecting took longer than allowed.
    case connectTimedOut(host: String, port: Int)
    /// A system call failed (`operation` is its name, `code` the errno).
    case system(operation: String, code: Int32)
    /// The peer reset the connection.
    case connectionReset
    /// The connection is closed (by us or the peer): nothing can be written.
    case closed
    /// More unsent bytes are queued than the limit allows (the peer is not reading).
    case writeBufferFull(limit: Int)
    /// TLS failed: OpenSSL's reason, or why the peer's certificate was not accepted.
    case tls(String)

    public var description: String {
        switch self {
        case .connectionRefused(let host, let port): "connection refused by \(host):\(port)"
        case .resolutionFailed(let host, let reason): "cannot resolve '\(host)': \(reason)"
        case .connectTimedOut(let host, let port): "timed out connecting to \(host):\(port)"
        case .system(let operation, let code): "\(operation) failed: \(String(cString: strerror(code)))"
        case .connectionReset: "connection reset by peer"
        case .closed: "connection closed"
        case .writeBufferFull(let limit): "more than \(limit) bytes waiting to be sent"
        case .tls(let reason): "TLS: \(reason)"
        }
    }
}
