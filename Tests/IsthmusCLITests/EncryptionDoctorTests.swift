import IsthmusCommon
@testable import IsthmusCLI
import IsthmusConfig
import Matrix
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
        let probed = EncryptionDoctor.findings(encryption, devices: 3, sample: device(sealedWith: encryption.pickleKey!), probed: true)
        #expect(probed.map(\.check) == ["encryption"], "the probe's own finding replaces the reminder")
    }

    @Test func theProbeIsAcknowledgedOnlyInATransactionThatCarriesNothingElse() throws {
        let ghost = UserID("@_xmpp_romeo:localhost")!, bot = UserID("@isthmus:localhost")!, device = DeviceID("ISTHMUSX")!
        let probe = ToDeviceProbe(user: ghost, device: device)
        func message(_ type: String, nonce: String) -> ToDeviceEvent {
            ToDeviceEvent(type: type, sender: bot, recipient: ghost, recipientDevice: device, content: .object(["nonce": .string(nonce)]))
        }
        let other = Transaction(id: TransactionID("1")!, events: [], toDevice: [message(ToDeviceProbe.eventType, nonce: probe.nonce),
                                                                                message("m.room.encrypted", nonce: "x")])
        #expect(!probe.acknowledges(other), "something of the bridge's rides along: refused, as every transaction during doctor")
        #expect(probe.arrived, "seen, even in a transaction doctor refuses")
        let earlier = Transaction(id: TransactionID("2")!, events: [], toDevice: [message(ToDeviceProbe.eventType, nonce: "an earlier run's")])
        #expect(probe.acknowledges(earlier), "only probes: nothing of the bridge's")
        #expect(!ToDeviceProbe(user: ghost, device: device).arrived)
        let ours = Transaction(id: TransactionID("3")!, events: [], toDevice: [message(ToDeviceProbe.eventType, nonce: probe.nonce)],
                               keyCounts: [])
        #expect(probe.acknowledges(ours))
    }
}
