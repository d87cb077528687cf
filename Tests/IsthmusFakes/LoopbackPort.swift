import Network

/// A loopback port for a server that binds it itself (the bridge's appservice listener, configured by port number).
public enum LoopbackPort {
    /// A port nothing listens on now: bound by a probe listener, then released. Another process or test may take it
    /// before the caller binds it, so a caller that can retry on "address in use" should.
    public static func unused() throws -> Int {
        let probe = try TCPListener()
        let port = probe.port
        probe.close()
        return port
    }
}
