import Foundation
import IsthmusConfig
import TestSupport
import Testing

/// Configs the config fuzz harness (Fuzz/fuzz-config) found that `check-config` accepted and `serve` refused.
@Suite struct ConfigFuzzRegressionTests {
    @Test func aComponentDomainThatIsNoJIDDomainIsRefused() {
        for domain in ["bridge.localhost.", ".bridge.localhost", "bridge..localhost"] {
            let text = ConfigFixture.minimal.replacingOccurrences(of: "component_domain: bridge.localhost",
                                                                  with: "component_domain: \(domain)")
            #expect(configError(text) == "config error at line 10, column 21: 'xmpp.component_domain': '\(domain)' is not a valid domain")
        }
    }

    @Test func aGhostPrefixThatCannotFormGhostIDsIsRefused() {
        // `==` marks the hashed long form of ghost ids, so a prefix may not hold it.
        let marker = ConfigFixture.minimal.replacingOccurrences(of: "  id: isthmus\n", with: "  id: isthmus\n  ghost_prefix: _x==\n")
        #expect(configError(marker) == """
            config error at line 6, column 17: 'appservice.ghost_prefix': '_x==' cannot prefix ghost user ids on 'localhost' \
            (a-z 0-9 . _ = - / + without '==', and the ids must fit in 255 bytes)
            """)
        let server = String(repeating: "s", count: 230)
        let long = ConfigFixture.minimal.replacingOccurrences(of: "server_name: localhost", with: "server_name: \(server)")
        #expect(configError(long)?.contains("'appservice.ghost_prefix': '_xmpp_' cannot prefix ghost user ids on '\(server)'") == true)
        // `+` is a localpart character since Matrix v1.8: accepted by both.
        let plus = ConfigFixture.minimal.replacingOccurrences(of: "  id: isthmus\n", with: "  id: isthmus\n  ghost_prefix: _x+\n")
        #expect(configError(plus) == nil)
    }

    @Test func aURLWithAPortBeyond65535IsRefused() {
        let text = ConfigFixture.minimal.replacingOccurrences(of: "url: http://127.0.0.1:29331", with: "url: http://127.0.0.1:69331")
        #expect(configError(text)?.contains("'appservice.url': expected an http:// or https:// URL, got 'http://127.0.0.1:69331'") == true)
        let homeserver = ConfigFixture.minimal.replacingOccurrences(of: "http://127.0.0.1:8008", with: "http://127.0.0.1:0")
        #expect(configError(homeserver)?.contains("'matrix.homeserver_url'") == true)
    }
}
