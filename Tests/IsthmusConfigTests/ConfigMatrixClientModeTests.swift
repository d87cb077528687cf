import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import TestSupport
import Testing

/// `matrix.mode: client` with `matrix.client:` and `relay.matrix_format`: the bridge as an ordinary Matrix account.
@Suite struct ConfigMatrixClientModeTests {
    /// A file in Matrix client mode: no appservice section; `client` and `extra` go into it.
    static func config(client: String = "    user_id: \"@relaybot:localhost\"\n    password: \"hunter2\"\n", extra: String = "") -> String {
        """
        matrix:
          homeserver_url: https://matrix.example.org
          server_name: localhost
          mode: client
          client:
        \(client)xmpp:
          component_domain: bridge.localhost
          component_secret: component-secret
        \(extra)
        """
    }

    @Test func appserviceIsTheDefault() throws {
        let config = try parseConfig(ConfigFixture.minimal)
        #expect(config.matrix.mode == .appservice)
        #expect(config.matrix.client == nil)
        #expect(config.relay.matrixFormat == "{nick}: {text}")
        #expect(config.botUserID == "@isthmus:localhost")
    }

    @Test func clientModeNeedsNoAppserviceSection() throws {
        let config = try parseConfig(Self.config())
        #expect(config.matrix.mode == .client)
        let client = try #require(config.matrix.client)
        #expect(client == Config.MatrixAccount(userID: UserID("@relaybot:localhost")!, password: "hunter2", deviceID: nil))
        #expect(config.botUserID == "@relaybot:localhost")
        #expect(config.appservice.asToken.isEmpty && config.appservice.hsToken.isEmpty, "nothing of the appservice is made up")
        #expect(config.relay.matrixFormat == "{nick}: {text}")
        #expect(config.warnings.isEmpty)
    }

    @Test func everyKeySet() throws {
        let config = try parseConfig(Self.config(
            client: "    user_id: \"@relaybot:localhost\"\n    password: \"hunter2\"\n    device_id: ISTHMUSRELAY\n",
            extra: "relay:\n  matrix_format: \"<{nick}> {text}\"\nmetrics:\n  listen: 127.0.0.1:29331\n"))
        #expect(config.matrix.client?.deviceID == DeviceID("ISTHMUSRELAY"))
        #expect(config.relay.matrixFormat == "<{nick}> {text}")
        #expect(config.metrics.listen == HostPort(host: "127.0.0.1", port: 29331), "no appservice listener to clash with")
        #expect(config.warnings.isEmpty)
    }

    @Test func thePasswordMayComeFromTheEnvironmentOrNowhere() throws {
        let noPassword = Self.config(client: "    user_id: \"@relaybot:localhost\"\n")
        #expect(try parseConfig(noPassword).matrix.client?.password == nil, "a session `isthmus login` stored is enough")
        let fromEnvironment = try parseConfig(Self.config(), environment: [Config.SecretVariable.matrixPassword: "from-env"])
        #expect(fromEnvironment.matrix.client?.password == "from-env", "the environment wins")
        #expect(Config.SecretVariable.matrixPassword == "ISTHMUS_MATRIX_PASSWORD")
        #expect(try parseConfig(Self.config(client: "    user_id: \"@relaybot:localhost\"\n    password: \"\"\n")).matrix.client?.password == nil)
    }

    @Test func aLeftoverAppserviceSectionIsReportedAsUnknown() throws {
        let config = try parseConfig(Self.config(extra: "appservice:\n  id: isthmus\n  as_token: x\n"))
        #expect(config.warnings.map(\.description) == ["config warning at line 11, column 1: unknown key 'appservice' (ignored)"])
        let leftoverClient = try parseConfig(ConfigFixture.minimal.replacingOccurrences(
            of: "  server_name: localhost\n", with: "  server_name: localhost\n  client:\n    user_id: \"@relaybot:localhost\"\n"))
        #expect(leftoverClient.matrix.mode == .appservice)
        #expect(leftoverClient.warnings.map(\.description).contains { $0.contains("'matrix.client'") })
    }

    @Test(arguments: [
        ("    user_id: relaybot\n", "'matrix.client.user_id': 'relaybot' is not a Matrix user id (@localpart:server)"),
        ("    user_id: \"@relaybot\"\n", "'matrix.client.user_id': '@relaybot' is not a Matrix user id (@localpart:server)"),
        ("    user_id: \"@relaybot:matrix.org\"\n",
         "'matrix.client.user_id': '@relaybot:matrix.org' is not on matrix.server_name 'localhost' (the homeserver the bridge logs in at)"),
        ("    password: x\n", "missing required key 'matrix.client.user_id'"),
        ("    user_id: \"@relaybot:localhost\"\n    device_id: SHORT\n",
         "'matrix.client.device_id': 'SHORT' must be 10 to 255 characters from A-Z a-z 0-9 - . _ ~ (the device ids OAuth 2.0 allows)"),
        ("    user_id: \"@relaybot:localhost\"\n    device_id: ISTHMUS/RELAY\n",
         "'matrix.client.device_id': 'ISTHMUS/RELAY' must be 10 to 255 characters from A-Z a-z 0-9 - . _ ~ (the device ids OAuth 2.0 allows)"),
    ])
    func badAccountsAreRefused(_ client: String, _ message: String) {
        #expect(configError(Self.config(client: client))?.hasSuffix(message) == true, "\(configError(Self.config(client: client)) ?? "parsed")")
    }

    @Test func aModeThatIsNeitherAndAClientModeWithoutItsSectionAreRefused() {
        let unknown = ConfigFixture.minimal.replacingOccurrences(of: "  server_name: localhost\n", with: "  server_name: localhost\n  mode: bot\n")
        #expect(configError(unknown)?.hasSuffix("'matrix.mode': must be appservice or client") == true)
        let noSection = ConfigFixture.minimal.replacingOccurrences(of: "  server_name: localhost\n", with: "  server_name: localhost\n  mode: client\n")
        #expect(configError(noSection)?.hasSuffix("missing required key 'matrix.client'") == true)
        #expect(configError(ConfigFixture.minimal.replacingOccurrences(of: "appservice:", with: "nothing:"))?
            .hasSuffix("missing required key 'appservice'") == true, "appservice mode still needs it")
    }

    /// The example's commented client mode, switched on (and its appservice section dropped), is a valid config.
    @Test func theExamplesClientModeLoads() throws {
        let example = try String(contentsOfFile: ConfigFixture.examplePath, encoding: .utf8)
        var lines: [String] = []
        var section = ""
        let switchedOn = ["  # mode: client", "  # client:", "  #   user_id", "  #   password", "  #   device_id", "# relay:", "#   matrix_format"]
        for line in example.components(separatedBy: "\n") {
            if let first = line.first, first != " ", first != "#" { section = line }
            if section == "appservice:" { continue }
            if section == "matrix:" || line.hasPrefix("# relay:") || line.hasPrefix("#   matrix_format"),
               switchedOn.contains(where: { line.hasPrefix($0) }), let mark = line.range(of: "# ") {
                lines.append(line.replacingCharacters(in: mark, with: ""))
            } else {
                lines.append(line)
            }
        }
        let directory = try TemporaryDirectory()
        let config = try Config.load(path: try directory.write(lines.joined(separator: "\n"), to: "isthmus.yaml"), environment: [:])
        #expect(config.warnings.isEmpty, "\(config.warnings)")
        #expect(config.matrix.client == Config.MatrixAccount(userID: UserID("@relaybot:localhost")!, password: "change-me",
                                                             deviceID: DeviceID("ISTHMUSRELAY")))
        #expect(config.relay.matrixFormat == "{nick}: {text}")
    }

    @Test func aMatrixFormatWithoutTheTextIsRefused() {
        #expect(configError(Self.config(extra: "relay:\n  matrix_format: \"{nick} said something\"\n"))?
            .hasSuffix("'relay.matrix_format': must contain {text} (the message), e.g. '{nick}: {text}'") == true)
    }
}
