/// One place where the account's server takes client connections, and how the stream starts there. A value.
public struct ServerEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// TLS from the first byte (XEP-0368: an `_xmpps-client` record, or `tls: direct`); else the stream starts in the
    /// clear and goes to TLS with STARTTLS (or stays plaintext with `tls: none`, to a loopback server only).
    public var directTLS: Bool

    public init(host: String, port: Int, directTLS: Bool) {
        self.host = host
        self.port = port
        self.directTLS = directTLS
    }

    /// `host:port`.
    public var description: String { "\(host):\(port)" }
}
