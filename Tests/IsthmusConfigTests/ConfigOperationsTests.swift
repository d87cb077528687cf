import IsthmusCommon
import IsthmusConfig
import TestSupport
import Testing

/// `metrics:` and the `logging:` keys of operations: format, per-module levels, file.
@Suite struct ConfigOperationsTests {
    @Test func defaultsWhenAbsent() throws {
        let config = try parseConfig(ConfigFixture.minimal)
        #expect(config.metrics.listen == nil)
        #expect(config.logging.level == .info)
        #expect(config.logging.format == .text)
        #expect(config.logging.levels.isEmpty)
        #expect(config.logging.file == nil)
        #expect(config.warnings.isEmpty)
    }

    @Test func everyKeySet() throws {
        let config = try parseConfig(ConfigFixture.minimal + """
            logging:
              level: warning
              format: json
              levels:
                xmpp.component: debug
                matrix: error
              file: log/isthmus.log
            metrics:
              listen: 127.0.0.1:9464

            """)
        #expect(config.metrics.listen == HostPort(host: "127.0.0.1", port: 9464))
        #expect(config.logging.format == .json)
        #expect(config.logging.levels == ["xmpp.component": .debug, "matrix": .error])
        #expect(config.logging.file == "/srv/isthmus/log/isthmus.log")
        #expect(config.logging.levelTable.level(for: "xmpp.component") == .debug)
        #expect(config.logging.levelTable.level(for: "bridge.portal") == .warning)
        #expect(config.warnings.isEmpty)
    }

    @Test func metricsListenOnIPv6() throws {
        let config = try parseConfig(ConfigFixture.minimal + "metrics:\n  listen: \"[::1]:9464\"\n")
        #expect(config.metrics.listen == HostPort(host: "::1", port: 9464))
    }

    @Test func badMetricsListen() {
        #expect(configError(ConfigFixture.minimal + "metrics:\n  listen: 9464\n")
            == "config error at line 13, column 11: 'metrics.listen': expected host:port, got '9464'")
    }

    @Test func metricsListenMustNotTakeTheAppserviceListenersPort() {
        #expect(configError(ConfigFixture.minimal + "metrics:\n  listen: 127.0.0.1:29331\n")
            == "config error at line 13, column 11: 'metrics.listen': 127.0.0.1:29331 is appservice.listen's port; the operations listener needs its own")
        #expect(configError(ConfigFixture.minimal + "metrics:\n  listen: 0.0.0.0:29331\n") != nil)
        #expect(configError(ConfigFixture.minimal + "metrics:\n  listen: 127.0.0.2:29331\n") == nil)
    }

    @Test func unknownMetricsKeyIsAWarning() throws {
        let config = try parseConfig(ConfigFixture.minimal + "metrics:\n  path: /metrics\n")
        #expect(config.warnings.map(\.description) == ["config warning at line 13, column 3: unknown key 'metrics.path' (ignored)"])
    }

    @Test func unknownFormat() {
        #expect(configError(ConfigFixture.minimal + "logging:\n  format: yaml\n")
            == "config error at line 13, column 11: 'logging.format': unknown format 'yaml' (text or json)")
    }

    @Test func unknownModuleLevel() {
        #expect(configError(ConfigFixture.minimal + "logging:\n  levels:\n    xmpp.component: loud\n")
            == "config error at line 14, column 21: 'logging.levels.xmpp.component': unknown level 'loud' (one of trace, debug, info, notice, warning, error, critical)")
    }

    @Test func levelsThatAreNotAMapping() {
        #expect(configError(ConfigFixture.minimal + "logging:\n  levels: debug\n")
            == "config error at line 13, column 11: 'logging.levels': expected a mapping")
    }

    @Test func moduleLevelThatIsNotAName() {
        #expect(configError(ConfigFixture.minimal + "logging:\n  levels:\n    xmpp: [debug]\n")
            == "config error at line 14, column 11: 'logging.levels.xmpp': expected a level name")
    }

    @Test func moduleLabelThatIsNotALabel() {
        #expect(configError(ConfigFixture.minimal + "logging:\n  levels:\n    \".xmpp\": debug\n")
            == "config error at line 14, column 5: 'logging.levels': '.xmpp' is not a logger label (e.g. xmpp.component)")
    }

    @Test func emptyLogFile() {
        #expect(configError(ConfigFixture.minimal + "logging:\n  file: \"\"\n")
            == "config error at line 13, column 9: 'logging.file': must not be empty (leave the key out to log to standard error)")
    }
}
