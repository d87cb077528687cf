import IsthmusCommon
import IsthmusConfig
import TestSupport
import Testing

/// `provisioning:`: the HTTP API's secret, self-service linking, allowed MUC services and the timeouts.
@Suite struct ConfigProvisioningTests {
    @Test func defaultsWhenAbsent() throws {
        let config = try parseConfig(ConfigFixture.minimal)
        #expect(config.provisioning.sharedSecret == nil)
        #expect(config.provisioning.selfService)
        #expect(config.provisioning.allowedMUCDomains == nil)
        #expect(config.provisioning.consentTimeout == .seconds(300))
        #expect(config.provisioning.inviteTimeout == .seconds(86_400))
    }

    @Test func everyKeySet() throws {
        let config = try parseConfig(ConfigFixture.minimal + """
            provisioning:
              shared_secret: 0123456789abcdef0123
              self_service: false
              allowed_muc_domains: [conference.example.org, muc.example.net]
              consent_timeout_seconds: 5
              invite_timeout_seconds: 60

            """)
        #expect(config.provisioning.sharedSecret == "0123456789abcdef0123")
        #expect(config.provisioning.selfService == false)
        #expect(config.provisioning.allowedMUCDomains == ["conference.example.org", "muc.example.net"])
        #expect(config.provisioning.consentTimeout == .seconds(5))
        #expect(config.provisioning.inviteTimeout == .seconds(60))
        #expect(config.warnings.isEmpty)
    }

    @Test func theSecretMayComeFromTheEnvironment() throws {
        let config = try parseConfig(ConfigFixture.minimal, environment: ["ISTHMUS_PROVISIONING_SECRET": "from-the-environment-1"])
        #expect(config.provisioning.sharedSecret == "from-the-environment-1")
    }

    @Test func aShortSecretIsRefused() {
        let message = configError(ConfigFixture.minimal + "provisioning:\n  shared_secret: short\n")
        #expect(message?.contains("provisioning.shared_secret") == true)
        #expect(message?.contains("at least 16 characters") == true)
    }
}
