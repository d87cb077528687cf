/// The config file of a bridge run against servers on loopback — the fakes here, or the test bed's Prosody and
/// Synapse — with the benchmarks' names: server `localhost`, component `bridge.localhost`, bot `@isthmus:localhost`
/// (nick `Matrix`), ghosts `@_xmpp_…:localhost`. `isthmus-bench` writes it for `isthmus serve`; the loopback tests
/// parse it for the bridge they run in-process.
public struct LoopbackBridgeConfig: Sendable {
    public var homeserverURL: String
    public var xmppPort: Int
    /// Where the bridge's appservice listener listens (and its `appservice.url`).
    public var appservicePort: Int
    public var asToken = "bench-as-token"
    public var hsToken = "bench-hs-token"
    public var componentSecret = "bench-secret"
    public var componentDomain = "bridge.localhost"
    public var logLevel = "info"
    /// YAML appended to the config (extra sections, e.g. `media:`).
    public var extraConfig = ""
    /// The store on PostgreSQL (`database.url`, a database of its own); nil: the SQLite file `isthmus.sqlite`
    /// beside the config.
    public var databaseURL: String?

    public init(homeserverURL: String, xmppPort: Int, appservicePort: Int) {
        self.homeserverURL = homeserverURL
        self.xmppPort = xmppPort
        self.appservicePort = appservicePort
    }

    /// The file's text.
    public var yaml: String {
        """
        matrix:
          homeserver_url: \(homeserverURL)
          server_name: localhost
        appservice:
          id: isthmus
          url: http://127.0.0.1:\(appservicePort)
          listen: 127.0.0.1:\(appservicePort)
          as_token: "\(asToken)"
          hs_token: "\(hsToken)"
          bot_localpart: isthmus
          ghost_prefix: _xmpp_
        xmpp:
          component_domain: \(componentDomain)
          server_host: 127.0.0.1
          server_port: \(xmppPort)
          component_secret: "\(componentSecret)"
          bot_nick: Matrix
        database:
          \(databaseURL.map { "url: \"\($0)\"" } ?? "path: isthmus.sqlite")
        logging:
          level: \(logLevel)

        """ + extraConfig
    }
}
