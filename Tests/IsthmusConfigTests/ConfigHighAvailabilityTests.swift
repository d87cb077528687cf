import IsthmusCommon
import IsthmusConfig
import TestSupport
import Testing

/// `ha:` — the active/standby pair's keys.
@Suite struct ConfigHighAvailabilityTests {
    let metrics = "metrics:\n  listen: 127.0.0.1:9464\n"

    @Test func offByDefault() throws {
        let ha = try parseConfig(ConfigFixture.minimal).ha
        #expect(ha.enabled == false)
        #expect(ha.leaseTTL == .seconds(10))
        #expect(ha.renewEvery == .seconds(2))
        #expect(ha.instanceName == nil)
    }

    @Test func everyKeySet() throws {
        let config = try parseConfig(ConfigFixture.minimal + metrics + """
            ha:
              enabled: true
              lease_ttl_seconds: 20
              renew_every_seconds: 5
              instance_name: bridge-a

            """)
        #expect(config.ha.enabled)
        #expect(config.ha.leaseTTL == .seconds(20))
        #expect(config.ha.renewEvery == .seconds(5))
        #expect(config.ha.instanceName == "bridge-a")
        #expect(config.warnings.isEmpty)
    }

    @Test func thePairNeedsTheOperationsListener() {
        #expect(configError(ConfigFixture.minimal + "ha:\n  enabled: true\n")
            == "config error at line 13, column 12: 'ha.enabled': an active/standby pair needs metrics.listen: the load balancer checks /ready there")
    }

    @Test func theTTLMustLeaveRoomForARetry() {
        #expect(configError(ConfigFixture.minimal + "ha:\n  lease_ttl_seconds: 6\n")
            == "config error at line 13, column 22: 'ha.lease_ttl_seconds': must be more than 3 × renew_every_seconds (6) and at most 3600")
        #expect(configError(ConfigFixture.minimal + "ha:\n  lease_ttl_seconds: 7\n") == nil)
        #expect(configError(ConfigFixture.minimal + "ha:\n  renew_every_seconds: 0\n") != nil)
    }

    @Test func theStepDownMarginOutlastsTheStepDownWatchdog() {
        // 2 × 1 s would let the standby take over while a lost holder's 3 s watchdog still runs.
        #expect(configError(ConfigFixture.minimal + "ha:\n  renew_every_seconds: 1\n  lease_ttl_seconds: 10\n")
            == "config error at line 13, column 24: 'ha.renew_every_seconds': must be between 2 and 3600 (2 × "
            + "renew_every_seconds must exceed the 3.0 seconds a lost holder takes to stop)")
        #expect(configError(ConfigFixture.minimal + "ha:\n  renew_every_seconds: 2\n  lease_ttl_seconds: 7\n") == nil)
        #expect(Config.HighAvailability.stepDownWatchdog + Config.HighAvailability.leaseTick < .seconds(2 * 2))
    }

    @Test func instanceNamesAreShortAndPrintable() {
        #expect(configError(ConfigFixture.minimal + "ha:\n  instance_name: \"a b\"\n") != nil)
        #expect(configError(ConfigFixture.minimal + "ha:\n  instance_name: \(String(repeating: "x", count: 101))\n") != nil)
    }
}
