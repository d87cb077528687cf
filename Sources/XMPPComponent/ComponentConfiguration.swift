import IsthmusCommon
import XMLStream

/// How to reach the XMPP server as a XEP-0114 component, and the timing of keepalives, requests and reconnects.
public struct ComponentConfiguration: Sendable {
    /// The server's component listener host (`xmpp.server_host`).
    public var host: String
    /// The server's component port (`xmpp.server_port`, Prosody's `component_ports`).
    public var port: Int
    /// The component's domain (`xmpp.component_domain`), e.g. `bridge.localhost`.
    public var componentDomain: String
    /// The shared secret (`xmpp.component_secret`).
    public var secret: String
    /// Where keepalive pings go; nil: the component domain's parent (`bridge.example.org` → `example.org`).
    public var serverDomain: String?
    /// Silence after which a XEP-0199 ping is sent to the server.
    public var pingInterval: Duration
    /// Silence after that ping after which the link is declared dead and reconnected.
    public var pingTimeout: Duration
    /// TCP connect deadline.
    public var connectTimeout: Duration
    /// Deadline from TCP connect to an accepted handshake.
    public var handshakeTimeout: Duration
    /// Default deadline for a response (IQs, joins, nick changes).
    public var requestTimeout: Duration
    /// First delay before reconnecting; doubles per failed attempt, with jitter.
    public var reconnectInitialDelay: Duration
    /// Upper bound of the reconnect delay.
    public var reconnectMaximumDelay: Duration
    /// How often timers are checked (keepalive, deadlines). Small values suit tests.
    public var tickInterval: Duration
    /// Limits on what the server may send.
    public var parserLimits: XMLStreamLimits
    /// Where the connection reads time (keepalive, deadlines, reconnect backoff).
    public var timeSource: TimeSource
    /// The one occupant whose copies of room presences the reader of ``ComponentConnection/events`` acts on (the
    /// bridge's bot). When set, a presence to another of the component's occupants (a puppet) is read only as far as
    /// its addresses, unless a request of that occupant in that room waits for an answer: XEP-0045 sends every
    /// occupant's presence to every occupant, so a room's joins are mostly such copies (issue 26: 210 of the 231
    /// presences a restart brings per room), and the bridge ignores them anyway. Nil: every stanza is delivered.
    public var primaryOccupant: JID?

    /// `componentDomain` is stored lowercased.
    public init(
        host: String, port: Int, componentDomain: String, secret: String, serverDomain: String? = nil,
        pingInterval: Duration = .seconds(60), pingTimeout: Duration = .seconds(20),
        connectTimeout: Duration = .seconds(10), handshakeTimeout: Duration = .seconds(10),
        requestTimeout: Duration = .seconds(30), reconnectInitialDelay: Duration = .seconds(1),
        reconnectMaximumDelay: Duration = .seconds(60), tickInterval: Duration = .milliseconds(250),
        parserLimits: XMLStreamLimits = .default, timeSource: TimeSource = .system
    ) {
        self.host = host
        self.port = port
        self.componentDomain = componentDomain.lowercased()
        self.secret = secret
        self.serverDomain = serverDomain
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.connectTimeout = connectTimeout
        self.handshakeTimeout = handshakeTimeout
        self.requestTimeout = requestTimeout
        self.reconnectInitialDelay = reconnectInitialDelay
        self.reconnectMaximumDelay = reconnectMaximumDelay
        self.tickInterval = tickInterval
        self.parserLimits = parserLimits
        self.timeSource = timeSource
    }

    /// The component's own JID (its bare domain).
    public var componentJID: JID? { JID(localpart: nil, domain: componentDomain) }

    /// The keepalive ping target.
    var pingTarget: JID {
        if let serverDomain, let jid = JID(serverDomain) { return jid }
        let labels = componentDomain.split(separator: ".", maxSplits: 1)
        if labels.count == 2, let parent = JID(localpart: nil, domain: String(labels[1])) { return parent }
        return JID(localpart: nil, domain: componentDomain)!
    }

    /// The settings of the protocol state machine.
    var machineConfiguration: ComponentStateMachine.Configuration {
        ComponentStateMachine.Configuration(
            componentDomain: componentDomain, secret: secret, pingTarget: pingTarget, pingInterval: pingInterval,
            pingTimeout: pingTimeout, handshakeTimeout: handshakeTimeout)
    }
}
