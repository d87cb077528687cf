import IsthmusCommon

extension ClientStateMachine {
    /// What the machine needs to know.
    public struct Configuration: Sendable, Hashable {
        /// The server's domain: the `to` of our header and where keepalive pings go.
        public var domain: String
        /// The SASL user name (the account's localpart).
        public var username: String
        /// The password, or a salted password cached from an earlier SCRAM success.
        public var credential: SCRAMClient.Credential
        /// The resource to ask for in a legacy bind (Bind2 binds one of the server's making, `Isthmus~…`).
        public var resource: String
        /// Whether to go on without TLS when the server offers no STARTTLS. Only for a server on loopback.
        public var allowPlaintext: Bool
        /// Send `<r/>` after this many stanzas of ours since the last one (XEP-0198 §4).
        public var ackEvery: Int
        /// Silence after which a keepalive ping is sent.
        public var pingInterval: Duration
        /// Silence after a keepalive ping after which the link is declared dead.
        public var pingTimeout: Duration
        /// Longest wait from TCP connect to established (all of TLS, SASL, resume or bind, enable).
        public var handshakeTimeout: Duration
        /// Longest wait for the server's `</stream:stream>` after ours.
        public var closeTimeout: Duration
        /// Who logs in, for SASL2 (its id should be kept across restarts: see ``SASL2UserAgent``).
        public var userAgent: SASL2UserAgent
        /// Whether to ask for XEP-0484 FAST tokens and log in with them when the server offers FAST (only inside TLS).
        public var fastTokens: Bool

        public init(
            domain: String, username: String, credential: SCRAMClient.Credential, resource: String,
            allowPlaintext: Bool = false, ackEvery: Int = 5, pingInterval: Duration = .seconds(60),
            pingTimeout: Duration = .seconds(20), handshakeTimeout: Duration = .seconds(30), closeTimeout: Duration = .seconds(2),
            userAgent: SASL2UserAgent = .random(), fastTokens: Bool = true
        ) {
            self.domain = domain
            self.username = username
            self.credential = credential
            self.resource = resource
            self.allowPlaintext = allowPlaintext
            self.ackEvery = ackEvery
            self.pingInterval = pingInterval
            self.pingTimeout = pingTimeout
            self.handshakeTimeout = handshakeTimeout
            self.closeTimeout = closeTimeout
            self.userAgent = userAgent
            self.fastTokens = fastTokens
        }
    }
}
