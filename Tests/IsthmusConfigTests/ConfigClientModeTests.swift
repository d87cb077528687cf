import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import TestSupport
import Testing

/// `xmpp.mode: client` with `xmpp.client:` and `relay:`: the bridge as an ordinary account.
@Suite struct ConfigClientModeTests {
    /// The minimal file with its xmpp section replaced by `xmpp`.
    static func config(_ xmpp: String, extra: String = "") -> String {
        let minimal = ConfigFixture.minimal
        let start = minimal.range(of: "xmpp:\n")!.lowerBound
        return String(minimal[..<start]) + xmpp + extra
    }

    static let client = """
        xmpp:
          mode: client
          client:
            jid: relay@example.org
            password: "hunter2"

        """

    @Test func componentIsTheDefault() throws {
        let config = try parseConfig(ConfigFixture.minimal)
        #expect(config.xmpp.mode == .component)
        #expect(config.xmpp.client == nil)
        #expect(config.relay == Config.Relay())
    }

    @Test func clientModeNeedsNoComponentKeysAndHasSaneDefaults() throws {
        let config = try parseConfig(Self.config(Self.client))
        #expect(config.xmpp.mode == .client)
        let client = try #require(config.xmpp.client)
        #expect(client.jid == JID("relay@example.org"))
        #expect(client.password == "hunter2")
        #expect(client.tls == .starttls)
        #expect(client.host == "example.org")
        #expect(client.port == 5222)
        #expect(client.fullJID == JID("relay@example.org/isthmus"))
        #expect(client.acceptSubscriptions == Config.SubscriptionPolicy.none)
        #expect(client.looksUpSRV, "no server_host: the SRV records of example.org, example.org:5222 the fallback")
        #expect(config.xmpp.botNick == "Matrix")
        #expect(config.relay.xmppFormat == "<{name}> {text}")
        #expect(config.relay.xmppEmoteFormat == "* {name} {text}")
        #expect(config.warnings.isEmpty)
    }

    @Test func everyClientKeySet() throws {
        let config = try parseConfig(Self.config("""
            xmpp:
              mode: client
              bot_nick: Bridge
              client:
                jid: relay@example.org
                password: "hunter2"
                server_host: xmpp.example.org
                server_port: 5223
                tls: direct
                ca_file: /etc/isthmus/ca.pem
                accept_subscriptions: linked

            """, extra: """
            relay:
              xmpp_format: "[{name}] {text}"
              xmpp_emote_format: "** {name} {text}"

            """))
        let client = try #require(config.xmpp.client)
        #expect(client.host == "xmpp.example.org")
        #expect(client.port == 5223)
        #expect(!client.looksUpSRV, "server_host given: no SRV lookup")
        #expect(client.tls == .direct)
        #expect(client.caFile == "/etc/isthmus/ca.pem")
        #expect(client.acceptSubscriptions == .linked)
        #expect(config.xmpp.botNick == "Bridge")
        #expect(config.relay.xmppFormat == "[{name}] {text}")
        #expect(config.relay.xmppEmoteFormat == "** {name} {text}")
        #expect(config.warnings.isEmpty)
    }

    @Test func anUnknownSubscriptionPolicyIsRefused() throws {
        let text = Self.config(Self.client.replacingOccurrences(of: "    password", with: "    accept_subscriptions: friends\n    password"))
        let error = #expect(throws: ConfigError.self) { try parseConfig(text) }
        #expect(error?.description.contains("xmpp.client.accept_subscriptions") == true)
        #expect(error?.description.contains("none, linked or all") == true)
    }

    @Test func directTLSDefaultsToItsOwnPort() throws {
        let config = try parseConfig(Self.config(Self.client.replacingOccurrences(of: "    password", with: "    tls: direct\n    password")))
        #expect(config.xmpp.client?.port == 5223)
    }

    @Test func thePasswordMayComeFromTheEnvironment() throws {
        let text = Self.config(Self.client.replacingOccurrences(of: "    password: \"hunter2\"\n", with: ""))
        #expect(throws: ConfigError.self) { try parseConfig(text) }
        let config = try parseConfig(text, environment: [Config.SecretVariable.xmppPassword: "from-env"])
        #expect(config.xmpp.client?.password == "from-env")
    }

    @Test func aServerPortWithoutAHostIsTheDomainsOwn() throws {
        let config = try parseConfig(Self.config(Self.client.replacingOccurrences(of: "    password", with: "    server_port: 5300\n    password")))
        let client = try #require(config.xmpp.client)
        #expect(client.looksUpSRV && client.host == "example.org" && client.port == 5300)
    }

    @Test func plaintextOnlyToALoopbackHost() throws {
        let loopback = Self.client.replacingOccurrences(of: "    password", with: "    server_host: 127.0.0.1\n    tls: none\n    password")
        #expect(try parseConfig(Self.config(loopback)).xmpp.client?.tls == Config.TLSMode.none)
        let localDomain = Self.client.replacingOccurrences(of: "relay@example.org", with: "relay@localhost")
            .replacingOccurrences(of: "    password", with: "    tls: none\n    password")
        #expect(try parseConfig(Self.config(localDomain)).xmpp.client?.looksUpSRV == false, "tls: none never looks up SRV records")
        let remote = Self.client.replacingOccurrences(of: "    password", with: "    server_host: xmpp.example.org\n    tls: none\n    password")
        let error = #expect(throws: ConfigError.self) { try parseConfig(Self.config(remote)) }
        #expect(error?.description.contains("xmpp.client.tls") == true)
        #expect(error?.description.contains("loopback") == true)
        let noHost = Self.client.replacingOccurrences(of: "    password", with: "    tls: none\n    password")
        #expect(throws: ConfigError.self) { try parseConfig(Self.config(noHost)) }
    }

    @Test(arguments: [
        "xmpp:\n  mode: relay\n",
        "xmpp:\n  mode: client\n",
        "xmpp:\n  mode: client\n  client:\n    jid: example.org\n    password: x\n",
        "xmpp:\n  mode: client\n  client:\n    jid: relay@example.org/res\n    password: x\n",
        "xmpp:\n  mode: client\n  client:\n    jid: relay@example.org\n    password: x\n    tls: maybe\n",
        "xmpp:\n  mode: client\n  client:\n    jid: relay@example.org\n    password: x\n    server_port: 70000\n",
    ])
    func badClientSectionsAreRefused(_ xmpp: String) {
        #expect(throws: ConfigError.self) { try parseConfig(Self.config(xmpp)) }
    }

    @Test func aFormatWithoutTheTextIsRefused() {
        let error = #expect(throws: ConfigError.self) {
            try parseConfig(Self.config(Self.client, extra: "relay:\n  xmpp_format: \"<{name}>\"\n"))
        }
        #expect(error?.description.contains("relay.xmpp_format") == true)
    }

    @Test func componentKeysLeftInClientModeAreReportedAsUnknown() throws {
        let config = try parseConfig(Self.config(Self.client.replacingOccurrences(of: "  mode: client\n", with: "  mode: client\n  component_secret: x\n")))
        #expect(config.warnings.map(\.description).contains { $0.contains("xmpp.component_secret") })
    }
}
