import IsthmusCommon

extension Config {
    /// `xmpp.mode`: how the bridge is on the XMPP server.
    public enum XMPPMode: String, Sendable, Equatable, CaseIterable {
        /// A XEP-0114 component (needs the server's admin): every Matrix user has an occupant of their own.
        case component
        /// An ordinary account (`xmpp.client`): one occupant relays the Matrix users (`relay`).
        case client
    }

    /// `xmpp.client:` — the ordinary account the bridge logs in as in client mode.
    public struct XMPPClient: Sendable, Equatable {
        /// `jid`: the account's bare JID.
        public var jid: JID
        /// `password`, or the env `ISTHMUS_XMPP_PASSWORD` (which wins).
        public var password: String
        /// `server_host`: where to connect; nil: the SRV records of the JID's domain, else the domain itself.
        public var serverHost: String?
        /// `server_port`; nil: 5222 (5223 with direct TLS). Without `server_host`, the port of the domain itself (the
        /// SRV records name their own ports).
        public var serverPort: Int?
        /// `tls`: how the stream is encrypted.
        public var tls: TLSMode = .starttls
        /// `ca_file`: an extra trust anchor (PEM) instead of the system's CA store.
        public var caFile: String?
        /// `accept_subscriptions`: whose presence subscription requests the account accepts.
        public var acceptSubscriptions: SubscriptionPolicy = .none
        /// The resource the bridge binds (not configurable: one bridge per account).
        public var resource = "isthmus"

        /// The host connected to; with ``looksUpSRV``, only when the domain has no SRV records.
        public var host: String { serverHost ?? jid.domain }
        /// The server is found through the SRV records of the JID's domain (RFC 6120 §3.2.1, XEP-0368): `server_host`
        /// is absent (never with `tls: none`, which needs a loopback one).
        public var looksUpSRV: Bool { serverHost == nil && tls != .none }
        /// The port connected to.
        public var port: Int { serverPort ?? (tls == .direct ? 5223 : 5222) }
        /// The account with the resource the bridge binds.
        public var fullJID: JID { jid.with(resource: resource)! }

        public init(jid: JID, password: String) {
            self.jid = jid
            self.password = password
        }
    }

    /// `xmpp.client.tls`.
    public enum TLSMode: String, Sendable, Equatable, CaseIterable {
        /// STARTTLS on the client port (RFC 6120 §5), the default.
        case starttls
        /// TLS from the first byte (XEP-0368).
        case direct
        /// No TLS: only to a loopback `server_host` (a test bed), never across a network.
        case none
    }

    /// `xmpp.client.accept_subscriptions`: whose requests to see the account's presence (RFC 6121 §3) it accepts;
    /// the others are declined (`unsubscribed`), so the server does not ask again at every login.
    public enum SubscriptionPolicy: String, Sendable, Equatable, CaseIterable {
        /// Nobody's (the default: a bridge has nothing to tell a contact).
        case none
        /// Those of people the bridge has seen in a linked room by their real JID.
        case linked
        /// Everybody's.
        case all
    }

    /// `relay:` — how relayed messages read: Matrix users' in the MUC when the bridge's one occupant relays them
    /// (`xmpp.mode: client`), XMPP occupants' in the Matrix room when the bridge's account does (`matrix.mode: client`).
    public struct Relay: Sendable, Equatable {
        /// `xmpp_format`, with `{name}` and `{text}`.
        public var xmppFormat = "<{name}> {text}"
        /// `xmpp_emote_format` (`/me`).
        public var xmppEmoteFormat = "* {name} {text}"
        /// `matrix_format`, with `{nick}` and `{text}`: the `body` a client without per-message profiles (MSC4144) shows.
        public var matrixFormat = "{nick}: {text}"

        public init() {}
    }

    /// `xmpp.client:` — `jid`, `password`, `server_host`, `server_port`, `tls`, `ca_file`, `accept_subscriptions`.
    static func decodeXMPPClient(_ reader: inout ConfigReader, environment: [String: String],
                                 baseDirectory: String) throws(ConfigError) -> XMPPClient {
        let text = try reader.string("jid")
        guard let parsed = JID(text), parsed.localpart != nil, parsed.resource == nil else {
            throw reader.invalid("jid", "'\(text)' is not an account's bare JID (user@domain)")
        }
        let password = try secret(&reader, "password", variable: SecretVariable.xmppPassword, environment: environment)
        var client = XMPPClient(jid: parsed, password: password)
        client.serverHost = try reader.optionalString("server_host")
        if let port = try reader.optionalInt("server_port") {
            guard (1...65535).contains(port) else { throw reader.invalid("server_port", "\(port) is not a TCP port (1–65535)") }
            client.serverPort = port
        }
        if let mode = try reader.optionalString("tls") {
            guard let tls = TLSMode(rawValue: mode) else { throw reader.invalid("tls", "must be starttls, direct or none") }
            client.tls = tls
        }
        if client.tls == .none, !isLoopback(client.host) {
            throw reader.invalid("tls", "none sends the password in the clear: only allowed with a loopback server_host, not '\(client.host)'")
        }
        client.caFile = try reader.optionalString("ca_file").map { resolve($0, against: baseDirectory) }
        if let policy = try reader.optionalString("accept_subscriptions") {
            guard let parsed = SubscriptionPolicy(rawValue: policy) else {
                throw reader.invalid("accept_subscriptions", "must be none, linked or all")
            }
            client.acceptSubscriptions = parsed
        }
        return client
    }

    /// `relay:` — `xmpp_format`, `xmpp_emote_format`, `matrix_format`; each must hold `{text}`.
    static func decodeRelay(_ reader: inout ConfigReader) throws(ConfigError) -> Relay {
        var relay = Relay()
        for (key, path, example) in [("xmpp_format", \Relay.xmppFormat, "<{name}> {text}"),
                                     ("xmpp_emote_format", \Relay.xmppEmoteFormat, "* {name} {text}"),
                                     ("matrix_format", \Relay.matrixFormat, "{nick}: {text}")] {
            guard let format = try reader.optionalString(key) else { continue }
            guard format.contains("{text}") else { throw reader.invalid(key, "must contain {text} (the message), e.g. '\(example)'") }
            relay[keyPath: path] = format
        }
        return relay
    }

    /// A loopback host: `localhost`, 127.0.0.0/8 or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }
}
