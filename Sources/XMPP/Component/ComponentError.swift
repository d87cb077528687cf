import IsthmusCommon

/// Why the component link (or one operation on it) failed. Each case says plainly what happened, for logs and for
/// `isthmus doctor`.
public enum ComponentError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which wait ran out.
    public enum Timeout: Sendable, Hashable {
        /// TCP connect.
        case connect
        /// Stream header and `<handshake/>` (XEP-0114 §3).
        case handshake
        /// No answer to a XEP-0199 keepalive ping: the link is dead.
        case keepalive
    }

    /// Nothing listens on host:port (`ECONNREFUSED`).
    case connectionRefused(host: String, port: Int)
    /// Name resolution or TCP failed otherwise.
    case connectionFailed(host: String, port: Int, reason: String)
    /// The server rejected the handshake: wrong component secret (`<not-authorized/>`).
    case notAuthorized
    /// Another connection already serves this component domain (`<conflict/>`).
    case conflict
    /// The server closed the link because a stanza had a `from` outside the component's domain (`<invalid-from/>`).
    case invalidFrom(String?)
    /// The server does not know the component domain (`<host-unknown/>`): check its config.
    case hostUnknown(String?)
    /// A wait ran out.
    case timeout(Timeout)
    /// The server closed the stream (`</stream:stream>`, or TCP closed without a stream error).
    case closedByServer
    /// The connection broke (reset, I/O error).
    case connectionLost(String)
    /// Any other stream error from the server.
    case streamError(StreamError)
    /// The server sent something we cannot accept (bad XML, unexpected element). We closed the stream.
    case protocolViolation(String)
    /// Not connected (never, not yet, or no longer): nothing was sent.
    case notConnected
    /// Refused before sending: the stanza's `from` is missing or outside the component domain (the server would
    /// kill the whole link with `<invalid-from/>`).
    case fromOutsideComponentDomain(JID?)

    public var description: String {
        switch self {
        case .connectionRefused(let host, let port):
            "nothing is listening on \(host):\(port) (connection refused)"
        case .connectionFailed(let host, let port, let reason):
            "cannot connect to \(host):\(port): \(reason)"
        case .notAuthorized:
            "the XMPP server rejected the component secret (not-authorized)"
        case .conflict:
            "another connection is already serving this component domain (conflict)"
        case .invalidFrom(let text):
            "the XMPP server closed the link over a stanza 'from' outside the component domain (invalid-from)"
                + (text.map { ": \($0)" } ?? "")
        case .hostUnknown(let text):
            "the XMPP server does not know this component domain (host-unknown)" + (text.map { ": \($0)" } ?? "")
        case .timeout(let what):
            switch what {
            case .connect: "timed out connecting"
            case .handshake: "timed out waiting for the component handshake"
            case .keepalive: "the XMPP server stopped answering keepalive pings"
            }
        case .closedByServer:
            "the XMPP server closed the stream"
        case .connectionLost(let reason):
            "the connection to the XMPP server was lost: \(reason)"
        case .streamError(let error):
            "the XMPP server closed the stream with an error: \(error)"
        case .protocolViolation(let reason):
            "the XMPP server sent something invalid: \(reason)"
        case .notConnected:
            "not connected to the XMPP server"
        case .fromOutsideComponentDomain(let from):
            "refused to send a stanza from '\(from?.description ?? "(none)")': outside the component domain"
        }
    }

    /// The typed error a stream error from the server means.
    public init(streamError: StreamError) {
        switch streamError.condition {
        case .notAuthorized: self = .notAuthorized
        case .conflict: self = .conflict
        case .invalidFrom: self = .invalidFrom(streamError.text)
        case .hostUnknown: self = .hostUnknown(streamError.text)
        default: self = .streamError(streamError)
        }
    }
}
