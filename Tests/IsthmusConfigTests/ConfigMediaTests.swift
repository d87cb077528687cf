import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import TestSupport
import Testing

/// `media:`: the public base of media links, the fetch limit, private addresses, concurrency and stalls.
@Suite struct ConfigMediaTests {
    @Test func defaultsWhenAbsent() throws {
        let config = try parseConfig(ConfigFixture.minimal)
        #expect(config.media.publicURL == nil)
        #expect(config.media.publicBase(appserviceURL: URL(string: "http://bridge.internal:9000/")!) == "http://bridge.internal:9000/media")
        #expect(config.media.maxSize == nil)
        #expect(config.media.allowPrivateAddresses == false)
        #expect(config.media.xmppUpload == false)
        #expect(config.media.maxConcurrentTransfers == 8)
        #expect(config.media.stallTimeout == .seconds(30))
    }

    @Test func everyKeySet() throws {
        let config = try parseConfig(ConfigFixture.minimal + """
            media:
              public_url: https://bridge.example.org/files
              max_size: 1000
              allow_private_addresses: true
              max_concurrent_transfers: 3
              stall_timeout_seconds: 7
              xmpp_upload: true

            """)
        #expect(config.media.publicBase(appserviceURL: URL(string: "http://x:1")!) == "https://bridge.example.org/files")
        #expect(config.media.maxSize == 1000)
        #expect(config.media.allowPrivateAddresses)
        #expect(config.media.maxConcurrentTransfers == 3)
        #expect(config.media.stallTimeout == .seconds(7))
        #expect(config.media.xmppUpload)
        #expect(config.warnings.isEmpty)
    }

    @Test(arguments: ["public_url: ftp://x/media", "max_size: 0", "max_concurrent_transfers: 0", "stall_timeout_seconds: -1"])
    func badValuesAreRefused(_ line: String) {
        #expect(throws: ConfigError.self) { try parseConfig(ConfigFixture.minimal + "media:\n  \(line)\n") }
    }
}
