import IsthmusConfig
import TestSupport
import Testing

/// `encryption:`: off by default; `allow` needs the appservice and a pickle key; `default` and `require` need `allow`,
/// and `require` no gateway.
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

    @Test func defaultEncryptsCreatedDMsAndRequireDoesToo() throws {
        let base = ConfigFixture.minimal + "encryption:\n  allow: true\n  pickle_key: '\(Self.key)'\n"
        #expect(try !parseConfig(base).encryption.encryptsCreatedRooms)
        let byDefault = try parseConfig(base + "  default: true\n").encryption
        #expect(byDefault.encryptsCreatedRooms && !byDefault.require)
        let required = try parseConfig(base + "  require: true\n").encryption
        #expect(required.encryptsCreatedRooms && required.require, "a required encryption is also the DMs the bridge creates")
    }

    @Test func whatIsRefusedAndWhy() {
        let missing = configError(ConfigFixture.minimal + "encryption:\n  allow: true\n")
        #expect(missing?.contains("ISTHMUS_PICKLE_KEY") == true, "\(missing ?? "")")
        let short = configError(ConfigFixture.minimal + "encryption:\n  allow: true\n  pickle_key: short\n")
        #expect(short?.contains("encryption.pickle_key") == true && short?.contains("openssl rand -base64 32") == true, "\(short ?? "")")
        for key in ["default", "require"] {
            let refused = configError(ConfigFixture.minimal + "encryption:\n  \(key): true\n")
            #expect(refused?.contains("encryption.\(key)") == true && refused?.contains("needs encryption.allow") == true, "\(refused ?? "")")
        }
        let gateway = configError(ConfigFixture.minimal + "gateway:\n  matrix_aliases: true\n"
                                  + "encryption:\n  allow: true\n  pickle_key: '\(Self.key)'\n  require: true\n")
        #expect(gateway?.contains("encryption.require") == true && gateway?.contains("public and unencrypted") == true, "\(gateway ?? "")")
        #expect(configError(ConfigFixture.minimal + "encryption:\n  allow: maybe\n")?.contains("encryption.allow") == true)
    }
}
