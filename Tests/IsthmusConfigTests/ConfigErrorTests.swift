import Foundation
import IsthmusConfig
import TestSupport
import Testing

/// Every refusal is one line naming the key (or YAML problem) and where it is.
@Suite struct ConfigErrorTests {
    /// `ConfigFixture.minimal` with `old` replaced by `new` (which must occur).
    func minimal(replacing old: String, with new: String) -> String {
        precondition(ConfigFixture.minimal.contains(old), "fixture has no \(old.debugDescription)")
        return ConfigFixture.minimal.replacingOccurrences(of: old, with: new)
    }

    @Test func missingKey() {
        let text = minimal(replacing: "  server_name: localhost\n", with: "")
        #expect(configError(text) == "config error at line 1, column 1: missing required key 'matrix.server_name'")
    }

    @Test func missingKeyWithNullValue() {
        let text = minimal(replacing: "  id: isthmus\n", with: "  id:\n")
        #expect(configError(text) == "config error at line 4, column 1: missing required key 'appservice.id'")
    }

    @Test func missingSection() {
        let text = minimal(replacing: "xmpp:\n  component_domain: bridge.localhost\n  component_secret: component-secret\n", with: "")
        #expect(configError(text) == "config error at line 1, column 1: missing required key 'xmpp'")
    }

    @Test func emptyFile() {
        #expect(configError("") == "config error: missing required key 'matrix'")
        #expect(configError("# only a comment\n") == "config error: missing required key 'matrix'")
    }

    @Test func wrongTypeNamesKeyAndValuePosition() {
        let text = ConfigFixture.minimal + "  server_port: abc\n"
        #expect(configError(text) == "config error at line 12, column 16: 'xmpp.server_port': expected an integer")
    }

    @Test func quotedNumberIsNotAnInteger() {
        let text = ConfigFixture.minimal + "  server_port: \"5347\"\n"
        #expect(configError(text) == "config error at line 12, column 16: 'xmpp.server_port': expected an integer")
    }

    @Test func sectionThatIsNotAMapping() {
        let text = ConfigFixture.minimal + "logging: verbose\n"
        #expect(configError(text) == "config error at line 12, column 10: 'logging': expected a mapping")
    }

    @Test func topLevelThatIsNotAMapping() {
        #expect(configError("- matrix\n- xmpp\n") == "config error at line 1, column 1: '(top level)': expected a mapping")
    }

    @Test func listWhereAStringIsExpected() {
        let text = minimal(replacing: "server_name: localhost", with: "server_name: [a, b]")
        #expect(configError(text) == "config error at line 3, column 16: 'matrix.server_name': expected a string")
    }

    @Test func badYAMLGivesLineAndColumn() {
        let text = minimal(replacing: "  server_name: localhost\n", with: "  server_name: localhost\n server_port: 1\n")
        let message = configError(text)
        #expect(message?.hasPrefix("config error at line 4, column 2: invalid YAML: ") == true, "\(message ?? "nil")")
    }

    @Test func unclosedFlowSequence() {
        let text = minimal(replacing: "server_name: localhost", with: "server_name: [localhost")
        #expect(configError(text)
            == "config error at line 4, column 11: invalid YAML: did not find expected ',' or ']'")
    }

    @Test func duplicateKey() {
        let text = minimal(replacing: "  server_name: localhost\n", with: "  server_name: localhost\n  server_name: other\n")
        #expect(configError(text) == "config error at line 4, column 3: invalid YAML: duplicate key 'server_name'")
    }

    @Test func anchorsAndAliasesAreRefused() {
        let anchored = minimal(replacing: "server_name: localhost", with: "server_name: &name localhost")
        #expect(configError(anchored)
            == "config error at line 3, column 16: invalid YAML: anchors and aliases are not supported in config files")
        let anchoredMapping = "base: &base\n  id: x\n" + ConfigFixture.minimal
        #expect(configError(anchoredMapping)
            == "config error at line 1, column 7: invalid YAML: anchors and aliases are not supported in config files")
        let aliased = minimal(replacing: "id: isthmus", with: "id: *name")
        #expect(configError(aliased)
            == "config error at line 5, column 7: invalid YAML: anchors and aliases are not supported in config files")
    }

    @Test func tagsAreRefused() {
        let text = ConfigFixture.minimal + "  server_port: !!int 5347\n"
        #expect(configError(text)
            == "config error at line 12, column 16: invalid YAML: tags are not supported in config files")
    }

    @Test func invalidURL() {
        let text = minimal(replacing: "homeserver_url: http://127.0.0.1:8008", with: "homeserver_url: ftp://127.0.0.1")
        #expect(configError(text) == """
            config error at line 2, column 19: 'matrix.homeserver_url': expected an http:// or https:// URL, \
            got 'ftp://127.0.0.1'
            """)
        let noHost = minimal(replacing: "url: http://127.0.0.1:29331", with: "url: http//missing-colon")
        #expect(configError(noHost) == """
            config error at line 6, column 8: 'appservice.url': expected an http:// or https:// URL, \
            got 'http//missing-colon'
            """)
    }

    @Test func identicalTokens() {
        let text = minimal(replacing: "hs_token: hs-secret", with: "hs_token: as-secret")
        #expect(configError(text) == """
            config error at line 8, column 13: 'appservice.hs_token': must differ from as_token \
            (each side must prove itself with its own secret)
            """)
        // Also when the equal token comes from the environment.
        #expect(configError(ConfigFixture.minimal, environment: ["ISTHMUS_HS_TOKEN": "as-secret"])?
            .hasSuffix("'appservice.hs_token': must differ from as_token (each side must prove itself with its own secret)") == true)
    }

    @Test func invalidListen() {
        let text = minimal(replacing: "  url: http://127.0.0.1:29331\n", with: "  url: http://127.0.0.1:29331\n  listen: nowhere\n")
        #expect(configError(text) == "config error at line 7, column 11: 'appservice.listen': expected host:port, got 'nowhere'")
    }

    @Test func portOutOfRange() {
        let text = ConfigFixture.minimal + "  server_port: 70000\n"
        #expect(configError(text) == "config error at line 12, column 16: 'xmpp.server_port': 70000 is not a TCP port (1–65535)")
    }

    @Test func unknownLogLevel() {
        let text = ConfigFixture.minimal + "logging:\n  level: loud\n"
        #expect(configError(text) == """
            config error at line 13, column 10: 'logging.level': unknown level 'loud' \
            (one of trace, debug, info, notice, warning, error, critical)
            """)
    }

    @Test func emptyDatabasePath() {
        let text = ConfigFixture.minimal + "database:\n  path: \"\"\n"
        #expect(configError(text) == "config error at line 13, column 9: 'database.path': must not be empty")
    }

    @Test func unknownDatabaseSynchronous() {
        let text = ConfigFixture.minimal + "database:\n  synchronous: off\n"
        #expect(configError(text) == "config error at line 13, column 16: 'database.synchronous': must be normal or full")
    }

    @Test func invalidBotLocalpartAndPrefix() {
        let bot = minimal(replacing: "  id: isthmus\n", with: "  id: isthmus\n  bot_localpart: Bridge Bot\n")
        #expect(configError(bot) == """
            config error at line 6, column 18: 'appservice.bot_localpart': 'Bridge Bot' is not a valid Matrix localpart \
            (a-z, 0-9, . _ = - /)
            """)
        let clash = minimal(replacing: "  id: isthmus\n", with: "  id: isthmus\n  bot_localpart: _xmpp_bot\n")
        #expect(configError(clash)
            == "config error at line 6, column 18: 'appservice.bot_localpart': must not start with ghost_prefix '_xmpp_'")
    }

    @Test func emptyRequiredString() {
        let text = minimal(replacing: "id: isthmus", with: "id: ''")
        #expect(configError(text) == "config error at line 5, column 7: 'appservice.id': must not be empty")
    }

    @Test func lineBreaksInValuesStayOnOneLine() {
        let text = minimal(replacing: "homeserver_url: http://127.0.0.1:8008", with: "homeserver_url: \"ftp://a\\nb\"")
        let message = configError(text)
        #expect(message == """
            config error at line 2, column 19: 'matrix.homeserver_url': expected an http:// or https:// URL, \
            got 'ftp://a\\nb'
            """)
        #expect(message?.contains("\n") == false)
    }

    @Test func aCarriageReturnLineFeedPairStaysOnOneLine() {
        // "\r\n" is a single Character: escaping must work on scalars to catch it.
        let error = ConfigError(.invalidValue(reason: "got 'a\r\nb'"), key: "matrix.server_name")
        #expect(error.description == "config error: 'matrix.server_name': got 'a\\r\\nb'")
    }
}
