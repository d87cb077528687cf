import IsthmusCommon
import IsthmusConfig
import TestSupport
import Testing

/// `gateway:`: rooms opened on demand through aliases, its limits, and what it refuses.
@Suite struct ConfigGatewayTests {
    @Test func offByDefault() throws {
        let gateway = try parseConfig(ConfigFixture.minimal).gateway
        #expect(!gateway.matrixAliases && !gateway.xmppRooms)
        #expect(gateway.allowedMUCDomains == nil && gateway.allowedMatrixServers == nil)
        #expect(gateway.idleDays == 7 && gateway.maxDynamicRooms == 1000 && gateway.maxOpensPerMinute == 30)
        #expect(gateway.maxGatewayRooms == 1000 && gateway.maxJoinsPerMinute == 10)
    }

    @Test func everyKeySet() throws {
        let config = try parseConfig(ConfigFixture.minimal + """
            gateway:
              matrix_aliases: true
              xmpp_rooms: false
              allowed_muc_domains: [Conference.Example.org]
              allowed_matrix_servers: [matrix.org]
              idle_days: 2
              max_dynamic_rooms: 10
              max_opens_per_minute: 3

            """)
        let gateway = config.gateway
        #expect(gateway.matrixAliases)
        #expect(gateway.allowedMUCDomains == ["conference.example.org"])
        #expect(gateway.allowedMatrixServers == ["matrix.org"])
        #expect(gateway.idleDays == 2 && gateway.maxDynamicRooms == 10 && gateway.maxOpensPerMinute == 3)
        #expect(config.warnings.isEmpty)
    }

    @Test func anEmptyAllowListAllowsAny() throws {
        let gateway = try parseConfig(ConfigFixture.minimal + "gateway:\n  matrix_aliases: true\n  allowed_muc_domains: []\n").gateway
        #expect(gateway.allowedMUCDomains == nil)
    }

    @Test func xmppRoomsNeedsTheComponentAndTheApplicationService() throws {
        #expect(try parseConfig(ConfigFixture.minimal + "gateway:\n  xmpp_rooms: true\n").gateway.xmppRooms)
    }

    @Test func badValuesAreRefused() {
        #expect(configError(ConfigFixture.minimal + "gateway:\n  idle_days: 0\n")?.contains("gateway.idle_days") == true)
        #expect(configError(ConfigFixture.minimal + "gateway:\n  max_opens_per_minute: 0\n")?.contains("gateway.max_opens_per_minute") == true)
        #expect(configError(ConfigFixture.minimal + "gateway:\n  max_joins_per_minute: 0\n")?.contains("gateway.max_joins_per_minute") == true)
        #expect(configError(ConfigFixture.minimal + "gateway:\n  allowed_muc_domains: ['a b']\n")?.contains("gateway.allowed_muc_domains") == true)
    }
}
