import Foundation
import IsthmusConfig
import TestSupport
import Testing

@Suite struct RegistrationTests {
    @Test func listsTheAppServiceAndItsNamespaces() throws {
        let yaml = try parseConfig(ConfigFixture.minimal).registrationYAML()
        for line in [
            "id: 'isthmus'",
            "url: 'http://127.0.0.1:29331'",
            "as_token: 'as-secret'",
            "hs_token: 'hs-secret'",
            "sender_localpart: 'isthmus'",
            "rate_limited: false",
            "      regex: '@_xmpp_.*:localhost'",
            "      regex: '@isthmus:localhost'",
            "      regex: '#_xmpp_.*:localhost'",
        ] {
            #expect(yaml.contains("\n\(line)\n"), "missing \(line.debugDescription) in:\n\(yaml)")
        }
        #expect(yaml.hasSuffix("\n"))
    }

    @Test func roundTripsThroughAYAMLParser() throws {
        let config = try parseConfig(ConfigFixture.full)
        let root = try YAMLNode.parse(config.registrationYAML())
        #expect(root["id"]?.scalarText == "isthmus-test")
        #expect(root["url"]?.scalarText == "http://10.0.0.5:29400")
        #expect(root["as_token"]?.scalarText == "as-secret")
        #expect(root["hs_token"]?.scalarText == "hs-secret")
        #expect(root["sender_localpart"]?.scalarText == "bridgebot")
        #expect(root["rate_limited"]?.scalarText == "false")
        #expect(root["rate_limited"]?.isPlainScalar == true, "a boolean, not the string 'false'")
        #expect(root["receive_ephemeral"]?.scalarText == "true")
        let users = try #require(root["namespaces"]?["users"])
        #expect(users.count == 2)
        #expect(users[0]?["exclusive"]?.scalarText == "true")
        #expect(users[0]?["regex"]?.scalarText == "@_x_.*:example\\.org")
        #expect(users[1]?["exclusive"]?.scalarText == "true")
        #expect(users[1]?["regex"]?.scalarText == "@bridgebot:example\\.org")
        let aliases = try #require(root["namespaces"]?["aliases"])
        #expect(aliases.count == 1)
        #expect(aliases[0]?["exclusive"]?.scalarText == "true")
        #expect(aliases[0]?["regex"]?.scalarText == "#_x_.*:example\\.org")
        #expect(root["namespaces"]?["rooms"]?.count == 0)
    }

    @Test func userRegexesMatchGhostsAndTheBotButNothingElse() throws {
        let root = try YAMLNode.parse(try parseConfig(ConfigFixture.minimal).registrationYAML())
        let patterns = try [0, 1].map { index in
            try Regex(try #require(root["namespaces"]?["users"]?[index]?["regex"]?.scalarText))
        }
        // Synapse matches namespaces with Python's re.match: anchored at the start only.
        func claimed(_ user: String) -> Bool { patterns.contains { user.prefixMatch(of: $0) != nil } }
        #expect(claimed("@_xmpp_alice=40localhost:localhost"))
        #expect(claimed("@isthmus:localhost"))
        #expect(!claimed("@alice:localhost"))
        #expect(!claimed("@_xmpp_alice:example.org"))
        #expect(!claimed("@isthmus:localhoss"))
    }

    @Test func escapesRegexMetacharactersInTheServerName() throws {
        let text = ConfigFixture.minimal.replacingOccurrences(of: "server_name: localhost", with: "server_name: example.org:8448")
        let root = try YAMLNode.parse(try parseConfig(text).registrationYAML())
        #expect(root["namespaces"]?["users"]?[0]?["regex"]?.scalarText == "@_xmpp_.*:example\\.org:8448")
        #expect(root["namespaces"]?["aliases"]?[0]?["regex"]?.scalarText == "#_xmpp_.*:example\\.org:8448")
        let ipv6 = ConfigFixture.minimal.replacingOccurrences(of: "server_name: localhost", with: "server_name: '[::1]:8448'")
        let v6root = try YAMLNode.parse(try parseConfig(ipv6).registrationYAML())
        #expect(v6root["namespaces"]?["users"]?[1]?["regex"]?.scalarText == "@isthmus:\\[::1\\]:8448")
    }

    @Test func escapesRegexMetacharactersInPrefixAndBot() throws {
        let text = ConfigFixture.minimal.replacingOccurrences(
            of: "  id: isthmus\n", with: "  id: isthmus\n  ghost_prefix: x.m+\n  bot_localpart: bot.1\n")
        let root = try YAMLNode.parse(try parseConfig(text).registrationYAML())
        #expect(root["namespaces"]?["users"]?[0]?["regex"]?.scalarText == "@x\\.m\\+.*:localhost")
        #expect(root["namespaces"]?["users"]?[1]?["regex"]?.scalarText == "@bot\\.1:localhost")
    }

    @Test func quotesTokensForYAML() throws {
        let text = ConfigFixture.minimal
            .replacingOccurrences(of: "as_token: as-secret", with: "as_token: \"it's: #not a comment\"")
            .replacingOccurrences(of: "hs_token: hs-secret", with: "hs_token: \"''\"")
        let yaml = try parseConfig(text).registrationYAML()
        #expect(yaml.contains("\nas_token: 'it''s: #not a comment'\n"))
        let root = try YAMLNode.parse(yaml)
        #expect(root["as_token"]?.scalarText == "it's: #not a comment")
        #expect(root["hs_token"]?.scalarText == "''")
    }

    @Test func doublesAQuoteFollowedByACombiningMark() throws {
        // "'" + U+0301 is a single Character: the quote must still be doubled (quoting works on scalars).
        let text = ConfigFixture.minimal.replacingOccurrences(of: "as_token: as-secret", with: "as_token: \"x'\u{301}y\"")
        let yaml = try parseConfig(text).registrationYAML()
        #expect(yaml.contains("\nas_token: 'x''\u{301}y'\n"))
        let root = try YAMLNode.parse(yaml)
        #expect(root["as_token"]?.scalarText == "x'\u{301}y")
    }
}
