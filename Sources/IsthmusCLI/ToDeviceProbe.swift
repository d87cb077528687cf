import FoundationEssentials
import IsthmusCommon
import Matrix
import MatrixClient
import Synchronization

/// `doctor`'s check that the homeserver pushes to-device messages to the bridge (`encryption.allow`; Synapse's
/// `msc2409_to_device_messages_enabled`, docs/encryption.md): while doctor's own listener runs, it sends a message of
/// its own type, as the bot, to a ghost device the store keeps (the homeserver drops one to a device it does not know),
/// and waits for a transaction that carries it.
///
/// A transaction that carries nothing but probes (and one-time-key counts: a top-up the bridge misses is made at a
/// later count or when the keys run short) is acknowledged. Any other is refused, as every transaction is during
/// doctor, so that the homeserver keeps its events for `serve` — not its to-device messages or device-list changes,
/// which Synapse does not send again, exactly as when no bridge listens: run doctor while the encrypted rooms are quiet.
/// After a refusal the homeserver sends nothing new until that one goes through, which the finding says (a warning,
/// not a failure: delivery was not disproved). Thread-safe.
final class ToDeviceProbe: Sendable {
    static let eventType = "org.isthmus.doctor.probe"
    /// The findings' name.
    static let check = "encryption.to_device"

    let target: (user: UserID, device: DeviceID)
    let nonce = Digest.randomHex(bytes: 8)
    private struct State {
        var seen = false
        var refused = 0
    }
    private let state = Mutex(State())

    init(user: UserID, device: DeviceID) { target = (user, device) }

    /// Whether the probe came back.
    var arrived: Bool { state.withLock { $0.seen } }

    /// Whether `transaction` may be acknowledged (it carries only probes); notes whether ours came.
    func acknowledges(_ transaction: Transaction) -> Bool {
        let probes = transaction.toDevice.filter { $0.type == Self.eventType }
        let ours = probes.contains { $0.content["nonce"]?.stringValue == nonce }
        let onlyProbes = transaction.events.isEmpty && transaction.ephemeral.isEmpty && transaction.deviceListsChanged.isEmpty
            && transaction.rejectedEvents.isEmpty && probes.count == transaction.toDevice.count
        state.withLock { state in
            if ours { state.seen = true }
            if !onlyProbes { state.refused += 1 }
        }
        return onlyProbes
    }

    /// Sends the probe and waits up to `timeout` for it; the finding.
    func run(_ client: MatrixClient, bot: UserID, timeout: Duration = .seconds(15)) async -> DoctorFinding {
        let device = "\(target.user) (device \(target.device))"
        do throws(MatrixError) {
            try await client.sendToDevice([target.user: [target.device: .object(["nonce": .string(nonce)])]], type: Self.eventType,
                                          transactionID: ClientTransactionID("isthmus-doctor-\(nonce)")!, as: bot)
        } catch {
            return DoctorFinding(ok: false, check: Self.check, detail: "sending a to-device probe to \(device) failed: \(error.description)")
        }
        let start = ContinuousClock.now
        while ContinuousClock.now - start < timeout {
            if arrived {
                let elapsed = ContinuousClock.now - start
                return DoctorFinding(ok: true, check: Self.check, detail:
                    "the homeserver pushes to-device messages to the bridge (a probe to \(device) came back in "
                        + "\(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000) ms)")
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        let refused = state.withLock { $0.refused }
        if refused > 0 {
            return DoctorFinding(ok: true, check: Self.check, detail:
                "could not tell whether the homeserver pushes to-device messages: it had \(refused) earlier transaction(s) for the "
                    + "bridge queued, which doctor leaves to serve; run doctor again once serve has taken them", warning: true)
        }
        return DoctorFinding(ok: false, check: Self.check, detail:
            "a to-device probe to \(device) did not reach the bridge within \(timeout.components.seconds) s: the homeserver does not "
                + "push to-device messages to appservices (Synapse: experimental_features msc2409_to_device_messages_enabled, and "
                + "receive_ephemeral: true in the registration; docs/encryption.md), so no encrypted message can be decrypted")
    }
}
