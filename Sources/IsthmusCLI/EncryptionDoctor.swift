import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import MatrixCrypto

/// The encryption part of `isthmus doctor` (`encryption.allow`). Pure: findings from the config and what the store
/// keeps — whether the pickle key opens the ghosts' devices, and, when no device could take the to-device probe
/// (``ToDeviceProbe``), a reminder of the homeserver's settings that doctor could not check.
enum EncryptionDoctor {
    static func findings(_ encryption: Config.Encryption, devices: Int, sample: StoredGhostDevice?, probed: Bool = false) -> [DoctorFinding] {
        guard encryption.allow, let secret = encryption.pickleKey else { return [] }
        var findings: [DoctorFinding] = []
        if let sample {
            let opens = (try? OlmAccount(pickle: sample.account, key: PickleKey(secret: secret))) != nil
            findings.append(DoctorFinding(ok: opens, check: "encryption", detail: opens
                ? "\(devices) ghost device(s) kept; encryption.pickle_key opens them"
                : "encryption.pickle_key does not open the ghost devices kept in the store: it was changed or lost "
                    + "(serve refuses to start; set the key they were sealed with)"))
        } else {
            findings.append(DoctorFinding(ok: true, check: "encryption", detail: "no ghost device yet (made at a ghost's first encrypted room)"))
        }
        // Checked with the probe once a device exists; until then, said once, so an operator knows what to look at.
        guard !probed else { return findings }
        findings.append(DoctorFinding(ok: true, check: "encryption.homeserver", detail:
            "not checked yet (no ghost device to send a probe to): the homeserver must push to-device messages to the bridge "
                + "(Synapse: experimental_features msc2409_to_device_messages_enabled and msc3202_transaction_extensions; "
                + "docs/encryption.md); without them every encrypted message is told as not decrypted", warning: true))
        return findings
    }
}
