import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixCrypto

/// Keeping the devices' keys topped up (MSC3202; ENCRYPTION.md §3 "Keeping accounts alive"): each Matrix device that
/// starts an Olm session with a ghost's device claims one of its one-time keys; when the homeserver reports fewer
/// than half of them left, new ones are made, kept and published; a fallback key that was used is replaced.
extension GhostDevices {
    /// Below this many unclaimed one-time keys a device gets new ones, back up to ``GhostDeviceSetup/oneTimeKeys``.
    static let refillBelow = GhostDeviceSetup.oneTimeKeys / 2

    /// Tops up the devices whose counts call for it, in the background (a transaction never waits for it; a failure
    /// is logged and the next report tries again).
    nonisolated func topUp(_ counts: [DeviceKeyCount]) {
        let low = counts.filter { ($0.oneTimeKeys ?? Self.refillBelow) < Self.refillBelow || $0.unusedFallbackKey == false }
        guard !low.isEmpty else { return }
        Task { await self.topUpNow(low) }
    }

    func topUpNow(_ counts: [DeviceKeyCount]) async {
        for count in counts where !toppingUp.contains(count.user) {
            toppingUp.insert(count.user)
            defer { toppingUp.remove(count.user) }
            do {
                guard let (device, account) = try await publishedAccount(of: count.user), device == count.device else { continue }
                let missing = count.oneTimeKeys.map { max(0, GhostDeviceSetup.oneTimeKeys - $0) } ?? 0
                if missing > 0, count.oneTimeKeys ?? 0 < Self.refillBelow { account.generateOneTimeKeys(count: missing) }
                if count.unusedFallbackKey == false { account.generateFallbackKey() }
                let user = count.user.rawValue
                let oneTime = try account.signedOneTimeKeys(userID: user, deviceID: device.rawValue)
                let fallback = try account.signedFallbackKey(userID: user, deviceID: device.rawValue)
                guard !oneTime.isEmpty || !fallback.isEmpty else { continue }
                // Kept before they are published: the homeserver refuses other keys under an id it has.
                try await store.keepToDeviceChanges([ToDeviceChanges(account: (count.user, account.pickle(with: pickleKey)))])
                try await homeserver.publishKeys(device: nil, oneTime: oneTime, fallback: fallback, of: count.user, device: device)
                account.markKeysAsPublished()
                try await store.keepToDeviceChanges([ToDeviceChanges(account: (count.user, account.pickle(with: pickleKey)))])
                logger.info("A ghost's device got new keys", metadata: [
                    "matrix.ghost.id": user, "keys.one_time": "\(oneTime.count)", "keys.fallback": "\(fallback.count)"])
            } catch {
                logger.warning("Could not top up a ghost's device keys; the next count report tries again",
                               metadata: ["matrix.ghost.id": count.user.rawValue, "error": "\(error)"])
            }
        }
    }
}
