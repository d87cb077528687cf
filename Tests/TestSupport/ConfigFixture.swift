import Foundation

/// Config file texts for tests, and the location of the repository's own files.
public enum ConfigFixture {
    /// A valid file that sets every key, each to a value that differs from its default.
    public static let full = """
        matrix:
          homeserver_url: https://matrix.example.org:8448
          server_name: example.org
        appservice:
          id: isthmus-test
          url: http://10.0.0.5:29400
          listen: 0.0.0.0:29401
          as_token: "as-secret"
          hs_token: "hs-secret"
          bot_localpart: bridgebot
          ghost_prefix: _x_
        xmpp:
          component_domain: bridge.example.org
          server_host: xmpp.example.org
          server_port: 5348
          component_secret: "component-secret"
          bot_nick: Relay
        database:
          path: data/bridge.sqlite
        logging:
          level: debug
          format: json
          levels:
            xmpp.component: info
        metrics:
          listen: 127.0.0.1:9464

        """

    /// A valid file with only the required keys (secrets included).
    public static let minimal = """
        matrix:
          homeserver_url: http://127.0.0.1:8008
          server_name: localhost
        appservice:
          id: isthmus
          url: http://127.0.0.1:29331
          as_token: as-secret
          hs_token: hs-secret
        xmpp:
          component_domain: bridge.localhost
          component_secret: component-secret

        """

    /// The repository's root folder (found from this source file's location).
    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// `config/isthmus.example.yaml`, the documented example.
    public static var examplePath: String { repositoryRoot.appendingPathComponent("config/isthmus.example.yaml").path }
}
