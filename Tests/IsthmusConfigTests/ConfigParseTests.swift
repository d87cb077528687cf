import Foundation
import IsthmusCommon
import IsthmusConfig
import TestSupport
import Testing

/// Parses `text` as if it were `/srv/isthmus/isthmus.yaml`.
func parseConfig(_ text: String, environment: [String: String] = [:]) throws(ConfigError) -> Config {
    try Config.parse(text, baseDirectory: "/srv/isthmus", environment: environment)
}

/// The one-line message `text` is refused with, or nil when it parses.
func configError(_ text: String, environment: [String: String] = [:]) -> String? {
    do {
        _ = try parseConfig(text, environment: environment)
        return nil
    } catch {
        return error.description
    }
}

@Suite struct ConfigParseTests {
    @Test func decodesEveryKey() throws {
        let config = try parseConfig(ConfigFixture.full)
        #expect(config.matrix.homeserverURL == URL(string: "https://matrix.example.org:8448"))
        #expect(config.matrix.serverName == "example.org")
        #expect(config.appservice.id == "isthmus-test")
        #expect(config.appservice.url == URL(string: "http://10.0.0.5:29400"))
        #expect(config.appservice.listen == HostPort(host: "0.0.0.0", port: 29401))
        #expect(config.appservice.asToken == "as-secret")
        #expect(config.appservice.hsToken == "hs-secret")
        #expect(config.appservice.botLocalpart == "bridgebot")
        #expect(config.appservice.ghostPrefix == "_x_")
        #expect(config.xmpp.componentDomain == "bridge.example.org")
        #expect(config.xmpp.serverHost == "xmpp.example.org")
        #expect(config.xmpp.serverPort == 5348)
        #expect(config.xmpp.componentSecret == "component-secret")
        #expect(config.xmpp.botNick == "Relay")
        #expect(config.database.path == "/srv/isthmus/data/bridge.sqlite")
        #expect(config.logging.level == .debug)
        #expect(config.logging.format == .json)
        #expect(config.logging.levels == ["xmpp.component": .info])
        #expect(config.metrics.listen == HostPort(host: "127.0.0.1", port: 9464))
        #expect(config.botUserID == "@bridgebot:example.org")
        #expect(config.warnings.isEmpty)
    }

    @Test func appliesDefaults() throws {
        let config = try parseConfig(ConfigFixture.minimal)
        #expect(config.appservice.listen == HostPort(host: "127.0.0.1", port: 29331))
        #expect(config.appservice.botLocalpart == "isthmus")
        #expect(config.appservice.ghostPrefix == "_xmpp_")
        #expect(config.xmpp.serverHost == "127.0.0.1")
        #expect(config.xmpp.serverPort == 5347)
        #expect(config.xmpp.botNick == "Matrix")
        #expect(config.database.path == "/srv/isthmus/isthmus.sqlite")
        #expect(config.logging.level == .info)
        #expect(config.warnings.isEmpty)
    }

    @Test(arguments: [
        ("http://bridge.example.org", HostPort(host: "bridge.example.org", port: 80)),
        ("https://bridge.example.org/", HostPort(host: "bridge.example.org", port: 443)),
        ("http://localhost:8080/isthmus", HostPort(host: "localhost", port: 8080)),
    ])
    func derivesListenFromURL(url: String, listen: HostPort) throws {
        let text = ConfigFixture.minimal.replacingOccurrences(of: "url: http://127.0.0.1:29331", with: "url: \(url)")
        #expect(try parseConfig(text).appservice.listen == listen)
    }

    @Test func derivesBracketedListenFromIPv6URL() throws {
        let text = ConfigFixture.minimal.replacingOccurrences(of: "url: http://127.0.0.1:29331", with: "url: http://[::1]:29331")
        let listen = try parseConfig(text).appservice.listen
        #expect(listen.host == "::1")
        #expect(listen.description == "[::1]:29331")
    }

    @Test func parsesListenForms() {
        #expect(HostPort("127.0.0.1:29331") == HostPort(host: "127.0.0.1", port: 29331))
        #expect(HostPort("[::1]:8008") == HostPort(host: "::1", port: 8008))
        #expect(HostPort("localhost:65535")?.description == "localhost:65535")
        for invalid in ["", "localhost", ":80", "localhost:", "localhost:0", "localhost:65536", "localhost:http", "[::1]8008"] {
            #expect(HostPort(invalid) == nil, "accepted \(invalid.debugDescription)")
        }
    }

    @Test func readsSecretsFromTheEnvironment() throws {
        let withoutSecrets = ConfigFixture.minimal
            .replacingOccurrences(of: "  as_token: as-secret\n", with: "")
            .replacingOccurrences(of: "  hs_token: hs-secret\n", with: "")
            .replacingOccurrences(of: "  component_secret: component-secret\n", with: "")
        let config = try parseConfig(withoutSecrets, environment: [
            "ISTHMUS_AS_TOKEN": "env-as", "ISTHMUS_HS_TOKEN": "env-hs", "ISTHMUS_COMPONENT_SECRET": "env-component",
        ])
        #expect(config.appservice.asToken == "env-as")
        #expect(config.appservice.hsToken == "env-hs")
        #expect(config.xmpp.componentSecret == "env-component")
    }

    @Test func environmentWinsOverTheFile() throws {
        let config = try parseConfig(ConfigFixture.full, environment: [
            Config.SecretVariable.asToken: "env-as", Config.SecretVariable.componentSecret: "env-component",
            Config.SecretVariable.hsToken: "",
        ])
        #expect(config.appservice.asToken == "env-as")
        #expect(config.xmpp.componentSecret == "env-component")
        // An empty variable does not count.
        #expect(config.appservice.hsToken == "hs-secret")
    }

    @Test(arguments: [
        ("  as_token: as-secret\n", "line 4, column 1: missing required key 'appservice.as_token' (or set ISTHMUS_AS_TOKEN)"),
        ("  hs_token: hs-secret\n", "line 4, column 1: missing required key 'appservice.hs_token' (or set ISTHMUS_HS_TOKEN)"),
        ("  component_secret: component-secret\n",
         "line 9, column 1: missing required key 'xmpp.component_secret' (or set ISTHMUS_COMPONENT_SECRET)"),
    ])
    func namesTheKeyAndVariableOfAMissingSecret(line: String, message: String) {
        let text = ConfigFixture.minimal.replacingOccurrences(of: line, with: "")
        #expect(configError(text) == "config error at \(message)")
    }

    @Test func emptySecretInFileCountsAsMissing() {
        let text = ConfigFixture.minimal.replacingOccurrences(of: "as_token: as-secret", with: "as_token: \"\"")
        #expect(configError(text)
            == "config error at line 4, column 1: missing required key 'appservice.as_token' (or set ISTHMUS_AS_TOKEN)")
    }

    @Test func keepsAbsoluteDatabasePathsAndResolvesRelativeOnes() throws {
        func path(_ value: String) throws -> String? {
            try parseConfig(ConfigFixture.full.replacingOccurrences(of: "path: data/bridge.sqlite", with: "path: \(value)")).database.path
        }
        #expect(try path("/var/lib/isthmus/state.sqlite") == "/var/lib/isthmus/state.sqlite")
        #expect(try path("state.sqlite") == "/srv/isthmus/state.sqlite")
        #expect(try path("../shared/state.sqlite") == "/srv/shared/state.sqlite")
        #expect(try path("./db/./state.sqlite") == "/srv/isthmus/db/state.sqlite")
    }

    @Test func reportsUnknownKeysAsWarnings() throws {
        let text = ConfigFixture.minimal
            .replacingOccurrences(of: "  server_name: localhost\n", with: "  server_name: localhost\n  colour: blue\n")
            + "extra_section:\n  anything: 1\n"
        let config = try parseConfig(text)
        #expect(config.warnings.map(\.description) == [
            "config warning at line 4, column 3: unknown key 'matrix.colour' (ignored)",
            "config warning at line 13, column 1: unknown key 'extra_section' (ignored)",
        ])
        #expect(config.warnings.allSatisfy { $0.isWarning })
        #expect(try parseConfig(ConfigFixture.minimal) == config)
    }

    @Test func acceptsEmptyOptionalSections() throws {
        let config = try parseConfig(ConfigFixture.minimal + "database:\nlogging: ~\n")
        #expect(config.database.path == "/srv/isthmus/isthmus.sqlite")
        #expect(config.database.synchronous == .normal)
        #expect(config.logging.level == .info)
    }

    @Test func databaseSynchronousIsNormalOrFull() throws {
        #expect(try parseConfig(ConfigFixture.minimal + "database:\n  synchronous: full\n").database.synchronous == .full)
        #expect(try parseConfig(ConfigFixture.minimal + "database:\n  synchronous: normal\n").database.synchronous == .normal)
    }
}
