import IsthmusCommon
import IsthmusConfig
import TestSupport
import Testing

/// `power_levels:`: what MUC positions give ghosts.
@Suite struct ConfigPowerLevelsTests {
    @Test func defaultsWhenAbsent() throws {
        let config = try parseConfig(ConfigFixture.minimal)
        #expect(config.powerLevels == Config.PowerLevels())
        #expect(config.powerLevels.owner == 100 && config.powerLevels.admin == 50 && config.powerLevels.moderator == 50)
    }

    @Test func everyKeySet() throws {
        let config = try parseConfig(ConfigFixture.minimal + """
            power_levels:
              owner: 90
              admin: 60
              moderator: 0

            """)
        #expect(config.powerLevels.owner == 90)
        #expect(config.powerLevels.admin == 60)
        #expect(config.powerLevels.moderator == 0)
        #expect(config.warnings.isEmpty)
    }

    @Test func aLevelAbove100IsRefused() {
        #expect(throws: ConfigError.self) {
            try parseConfig(ConfigFixture.minimal + """
                power_levels:
                  owner: 101

                """)
        }
    }
}
