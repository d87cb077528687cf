import IsthmusCommon
@testable import IsthmusCLI
import IsthmusConfig
import IsthmusStore
import MatrixCrypto
import Testing

/// `doctor` with `encryption.allow`: whether the pickle key opens the kept devices, and the homeserver reminder.
@Suite struct EncryptionDoctorTests {
    var encryption: Config.Encryption {
        var encryption = Config.Encryption()
        encryption.allow = true
        encryption.pickleKey = "a pickle key of at least thirty-two characters"
        return encryption
    }

    func device(sealedWith secret: String) -> StoredGhostDevice {
        StoredGhostDevice(user: UserID("@_xmpp_romeo:localhost")!, device: DeviceID("ISTHMUSX")!, stage: .crossSigned,
                          account: OlmAccount().pickle(with: PickleKey(secret: secret)), crossSigning: [])
    }

    @Test func theKeyOpensTheDevicesOrTheFindingSaysItWasChanged() throws {
        let good = EncryptionDoctor.findings(encryption, devices: 3, sample: device(sealedWith: encryption.pickleKey!))
        #expect(good.map(\.ok) == [true, true])
        #expect(good[0].detail.contains("3 ghost device(s)") && good[1].warning)
        let bad = EncryptionDoctor.findings(encryption, devices: 3, sample: device(sealedWith: "another key of at least thirty-two characters"))
        #expect(bad[0].ok == false && bad[0].detail.contains("does not open"))
        #expect(EncryptionDoctor.findings(encryption, devices: 0, sample: nil)[0].detail.contains("no ghost device yet"))
        #expect(EncryptionDoctor.findings(Config.Encryption(), devices: 0, sample: nil).isEmpty, "nothing when encryption is off")
    }
}
