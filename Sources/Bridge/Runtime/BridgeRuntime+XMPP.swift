import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import XMPP
import XMPPClient
import XMPPComponent

/// The XMPP connection `serve` runs: the XEP-0114 component's, or in client mode (`xmpp.mode: client`) the account's.
enum XMPPSessionConnection: Sendable {
    case component(ComponentConnection)
    case client(ClientConnection)

    /// Connects and stays connected (reconnecting; the client resuming its session) until cancelled or closed.
    func run() async {
        switch self {
        case .component(let connection): await connection.run()
        case .client(let connection): await connection.run()
        }
    }

    /// Closes the stream gracefully and returns once ``run()`` has stopped.
    func close() async {
        switch self {
        case .component(let connection): await connection.close()
        case .client(let connection): await connection.close()
        }
    }
}

extension BridgeRuntime {
    /// The bridge's names on the XMPP side: under the component, or the account's.
    func makeNaming() -> BridgeNaming? {
        if let client = config.xmpp.client { return BridgeNaming(account: client.fullJID, botNick: config.xmpp.botNick) }
        return BridgeNaming(componentDomain: config.xmpp.componentDomain, botNick: config.xmpp.botNick)
    }

    /// The connection of the configured mode and the bridge's link over it. In client mode the XEP-0198 session kept
    /// in the store is read when the connection starts (an active/standby pair's standby starts it only once active)
    /// and resumed on the first connection, and each change of it is kept there; so are the login's SASL2 user-agent
    /// id, salted password and FAST token (`xmpp_credentials`).
    func makeXMPP(naming: BridgeNaming, store: Store) async throws -> (XMPPSessionConnection, SessionXMPPLink) {
        let linkLogger = logger.with(label: "xmpp.link")
        guard let client = config.xmpp.client else {
            let component = ComponentConnection(configuration: componentConfiguration, logger: logger.with(label: "xmpp.component"))
            return (.component(component), SessionXMPPLink(connection: component, logger: linkLogger, primaryOccupant: naming.botOccupant,
                                                           gatewayDomain: config.gateway.xmppRooms ? config.xmpp.componentDomain : nil))
        }
        let keeper = StoreClientSessionKeeper(store: store, account: client.jid)
        let (credentialKeeper, credentials) = try await StoreClientCredentialKeeper.load(store: store, account: client.jid)
        let userAgent = SASL2UserAgent(id: credentialKeeper.userAgentID, device: ProcessInfo.processInfo.hostName)
        var configuration = Self.clientConfiguration(client, userAgent: userAgent)
        // Interested and available (RFC 6121 §2.2, §4.2): subscription requests and XEP-0249 invitations reach it.
        configuration.onNewSession = [.iq(IQ(type: .get, id: StanzaAttributeID("roster-1")!, payload: .other(XElement("query", namespace: XMPPNamespace.roster)))),
                                      .presence(Presence())]
        let connection = ClientConnection(configuration: configuration, keeper: keeper, credentials: credentials,
                                          credentialKeeper: credentialKeeper,
                                          logger: logger.with(label: "xmpp.client"))
        return (.client(connection), SessionXMPPLink(client: connection, logger: linkLogger))
    }

    var componentConfiguration: ComponentConfiguration {
        var configuration = ComponentConfiguration(host: config.xmpp.serverHost, port: config.xmpp.serverPort,
                                                   componentDomain: config.xmpp.componentDomain, secret: config.xmpp.componentSecret)
        // The link reads the bot's copies only (`SessionXMPPLink`'s `primaryOccupant`): the others can stop early.
        configuration.primaryOccupant = makeNaming()?.botOccupant
        return configuration
    }

    /// `xmpp.client` as the connection's settings: without `server_host`, the server is looked up in DNS (SRV).
    /// `userAgent`: who logs in over SASL2, kept in the store by `serve`; without one (doctor) a passing identity that
    /// asks for no FAST token (none would be kept).
    public static func clientConfiguration(_ client: Config.XMPPClient, userAgent: SASL2UserAgent? = nil) -> ClientConfiguration {
        let stream = ClientStateMachine.Configuration(
            domain: client.jid.domain, username: client.jid.localpart ?? "", credential: .password(client.password),
            resource: client.resource, allowPlaintext: client.tls == .none, userAgent: userAgent ?? .random(),
            fastTokens: userAgent != nil)
        return ClientConfiguration(host: client.host, port: client.port, stream: stream, directTLS: client.tls == .direct,
                                   srvLookup: client.looksUpSRV ? .system : nil, trustedCertificatesFile: client.caFile)
    }
}
