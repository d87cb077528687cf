import IsthmusCommon
import XMLStream
import XMPP

/// Where the bridge's account connects and how patient it is (immutable; one per ``ClientConnection``).
public struct ClientConfiguration: Sendable {
    /// The server to connect to (until SRV lookup lands: the configured `server_host`, else the JID's domain).
    /// The account's JID with the resource it asks to bind: what requests name as the asker.
    public var host: String
    public var port: Int
    /// The stream's protocol settings: the account, the credential, the timers of the stream itself.
    public var stream: ClientStateMachine.Configuration
    /// TLS from the first byte (XEP-0368 direct TLS) instead of STARTTLS.
    public var directTLS: Bool
    /// Whom the server's certificate must chain to: a PEM file, or nil for the system's CA store.
    public var trustedCertificatesFile: String?
    /// Longest wait for the TCP connection.
    public var connectTimeout: Duration
    /// The default wait for the answer to a request (an IQ, a join, an archive page).
    public var requestTimeout: Duration
    /// First wait before a reconnect; doubles up to ``reconnectMaximumDelay``, with jitter.
    public var reconnectInitialDelay: Duration
    public var reconnectMaximumDelay: Duration
    /// How often the machine's timers are checked.
    public var tickInterval: Duration
    public var parserLimits: XMLStreamLimits
    public var timeSource: TimeSource
    /// Sent in order once each new session is established (not after a resumption: the server kept what they set up),
    /// e.g. the roster request and initial presence that make the session one the server tells about subscription
    /// requests and messages to the bare JID (RFC 6121 §2.2, §3.1.3, §4.2). Empty: none (`isthmus doctor`).
    public var onNewSession: [Stanza] = []

    public init(
        host: String, port: Int, stream: ClientStateMachine.Configuration, directTLS: Bool = false,
        trustedCertificatesFile: String? = nil, connectTimeout: Duration = .seconds(10), requestTimeout: Duration = .seconds(30),
        reconnectInitialDelay: Duration = .seconds(1), reconnectMaximumDelay: Duration = .seconds(60),
        tickInterval: Duration = .milliseconds(250), parserLimits: XMLStreamLimits = .default, timeSource: TimeSource = .system
    ) {
        self.host = host
        self.port = port
        self.stream = stream
        self.directTLS = directTLS
        self.trustedCertificatesFile = trustedCertificatesFile
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.reconnectInitialDelay = reconnectInitialDelay
        self.reconnectMaximumDelay = reconnectMaximumDelay
        self.tickInterval = tickInterval
        self.parserLimits = parserLimits
        self.timeSource = timeSource
    }
}
