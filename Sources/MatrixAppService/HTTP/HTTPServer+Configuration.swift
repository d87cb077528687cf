import FoundationEssentials

extension HTTPServer {
    /// Listen address, admission and limits. The defaults suit a test or benchmark peer (everything admitted,
    /// generous limits); the appservice listener sets hardened values (see ``AppServiceListener/Configuration``).
    public struct Configuration: Sendable {
        public var host: String
        /// 0 picks a free port (see ``HTTPServer/port``).
        public var port: Int
        /// Body limit of the default admission (requests admitted by ``admission`` carry their own).
        public var maxBodyBytes: Int
        /// Open connections kept at most; above it the least valuable one is closed (see ``ConnectionPolicy``).
        public var connectionLimit: Int
        /// Idle connections that have not authenticated, kept at most per peer address.
        public var unauthenticatedConnectionsPerAddress: Int
        /// How long a connection that has not authenticated may stay idle or take to send a request head.
        public var unauthenticatedTimeout: Duration
        /// Idle timeout of authenticated keep-alive connections.
        public var idleTimeout: Duration
        /// Longest time from a request's head to the end of its body; a slower upload is cut off.
        public var requestTimeout: Duration
        /// Decides on each request head before any body byte is read. Nil admits every request as authenticated
        /// with ``maxBodyBytes``. Runs on libmicrohttpd's thread: keep it quick and free of blocking I/O.
        public var admission: (@Sendable (HTTPRequestHead) -> HTTPAdmission)?
        /// The answer to a body above its limit.
        public var tooLargeResponse: HTTPServerResponse

        public init(host: String, port: Int, maxBodyBytes: Int = 16 << 20, connectionLimit: Int = 1024,
                    unauthenticatedConnectionsPerAddress: Int = .max, unauthenticatedTimeout: Duration = .seconds(90),
                    idleTimeout: Duration = .seconds(90), requestTimeout: Duration = .seconds(300),
                    admission: (@Sendable (HTTPRequestHead) -> HTTPAdmission)? = nil,
                    tooLargeResponse: HTTPServerResponse = HTTPServerResponse(status: 413, body: Data("Request body too large".utf8))) {
            self.host = host
            self.port = port
            self.maxBodyBytes = maxBodyBytes
            self.connectionLimit = connectionLimit
            self.unauthenticatedConnectionsPerAddress = unauthenticatedConnectionsPerAddress
            self.unauthenticatedTimeout = unauthenticatedTimeout
            self.idleTimeout = idleTimeout
            self.requestTimeout = requestTimeout
            self.admission = admission
            self.tooLargeResponse = tooLargeResponse
        }

        /// The connection rules this configuration asks for.
        var connectionLimits: ConnectionPolicy.Limits {
            ConnectionPolicy.Limits(total: connectionLimit, unauthenticatedPerAddress: unauthenticatedConnectionsPerAddress,
                                    unauthenticatedTimeout: unauthenticatedTimeout)
        }
    }
}
