import IsthmusConfig
import TestSupport
import Testing

/// `encryption:`: off by default; `allow` needs the appservice and a pickle key; `default` and `require` are refused
/// until encrypted messages are bridged.
@Suite struct ConfigEncryptionTests {
    static let key = "0123456789abcdef0123456789abcdef"

    @Test func offByDefaultAndTheRegistrationAsksForNothingMore() throws {
        let config = try parseConfig(ConfigFixture.minimal)
        #expect(config.encryption == Config.Encryption())
        #expect(!config.encryption.allow && config.encryption.pickleKey == nil)
        #expect(!config.registrationYAML().contains("msc3202"))
    }

    @Test func allowWithAKeyFromTheFileOrTheEnvironment() throws {
        let config = try parseConfig(ConfigFixture.minimal + "encryption:\n  allow: true\n  pickle_key: '\(Self.key)'\n")
        #expect(config.encryption.allow && config.encryption.pickleKey == Self.key)
        #expect(config.warnings.isEmpty)
        let root = try YAMLNode.parse(config.registrationYAML())
        #expect(root["org.matrix.msc3202"]?.scalarText == "true")
        #expect(root["org.matrix.msc3202"]?.isPlainScalar == true, "a boolean: Synapse refuses anything else")

        let fromEnvironment = try Config.parse(ConfigFixture.minimal + "encryption:\n  allow: true\n  pickle_key: '\(Self.key)'\n",
                                               baseDirectory: "/tmp", environment: ["ISTHMUS_PICKLE_KEY": Self.key + "-env"])
        #expect(fromEnvironment.encryption.pickleKey == Self.key + "-env", "the environment wins")
    }

    @Test func whatIsRefusedAndWhy() {
        let missing = configError(ConfigFixture.minimal + "encryption:\n  allow: true\n")
        #expect(missing?.contains("ISTHMUS_PICKLE_KEY") == true, "\(missing ?? "")")
        let short = configError(ConfigFixture.minimal + "encryption:\n  allow: true\n  pickle_key: short\n")
        #expect(short?.contains("encryption.pickle_key") == true && short?.contains("openssl rand -base64 32") == true, "\(short ?? "")")
        for key in ["default", "require"] {
            let refused = configError(ConfigFixture.minimal + "encryption:\n  allow: true\n  pickle_key: '\(Self.key)'\n  \(key): true\n")
            #expect(refused?.contains("encryption.\(key)") == true && refused?.contains("not supported yet") == true, "\(refused ?? "")")
        }
        #expect(configError(ConfigFixture.minimal + "encryption:\n  allow: maybe\n")?.contains("encryption.allow") == true)
    }
}
