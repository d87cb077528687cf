import IsthmusCommon
import XMLStream
import XMPP

/// Where the bridge's account connects and how patient it is (immutable; one per ``ClientConnection``).
public struct ClientConfiguration: Sendable {
    /// The server to connect to: the configured `server_host`, else the JID's domain (with ``srvLookup``, only when
    /// the domain has no SRV records).
    public var host: String
    public var port: Int
    /// The stream's protocol settings: the account, the credential, the timers of the stream itself.
    public var stream: ClientStateMachine.Configuration
    /// TLS from the first byte (XEP-0368 direct TLS) instead of STARTTLS; with ``srvLookup``, only `_xmpps-client`
    /// records are used.
    public var directTLS: Bool
    /// Look the server up in the SRV records of the account's domain (`_xmpps-client._tcp`, `_xmpp-client._tcp`) on
    /// every connection attempt, ``host``:``port`` being the fallback when it has none; nil: ``host``:``port`` only
    /// (`server_host` configured, or `tls: none`).
    public var srvLookup: SRVLookup?
    /// Whom the server's certificate must chain to: a PEM file, or nil for the system's CA store.
    public var trustedCertificatesFile: String?
    /// Longest wait for the TCP connection to one endpoint (several are tried in turn when SRV records name them).
    public var connectTimeout: Duration
    /// The default wait for the answer to a request (an IQ, a join, an archive page).
    public var requestTimeout: Duration
    /// First wait before a reconnect; doubles up to ``reconnectMaximumDelay``, with jitter.
    public var reconnectInitialDelay: Duration
    public var reconnectMaximumDelay: Duration
    /// The most of our stanzas the server may leave unacknowledged (XEP-0198) before messages wait
    /// (``ClientConnection/awaitSendCapacity()``): the pace a throttling server sets, without unbounded buffers.
    public var sendWindow: Int = 128
    /// How often the machine's timers are checked.
    public var tickInterval: Duration
    public var parserLimits: XMLStreamLimits
    public var timeSource: TimeSource
    /// Sent in order once each new session is established (not after a resumption: the server kept what they set up),
    /// e.g. the roster request and initial presence that make the session one the server tells about subscription
    /// requests and messages to the bare JID (RFC 6121 §2.2, §3.1.3, §4.2). Empty: none (`isthmus doctor`).
    public var onNewSession: [Stanza] = []

    public init(
        host: String, port: Int, stream: ClientStateMachine.Configuration, directTLS: Bool = false, srvLookup: SRVLookup? = nil,
        trustedCertificatesFile: String? = nil, connectTimeout: Duration = .seconds(10), requestTimeout: Duration = .seconds(30),
        reconnectInitialDelay: Duration = .seconds(1), reconnectMaximumDelay: Duration = .seconds(60),
        tickInterval: Duration = .milliseconds(250), parserLimits: XMLStreamLimits = .default, timeSource: TimeSource = .system
    ) {
        self.host = host
        self.port = port
        self.stream = stream
        self.directTLS = directTLS
        self.srvLookup = srvLookup
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
