extension Bridge {
    /// `encryption.allow`: the ghosts' encryption devices, shared with the Matrix link that encrypts their messages.
    public struct EncryptionWiring: Sendable {
        let devices: GhostDevices
        /// Which rooms are bridged by their encryption (`encryption.require`: only encrypted ones).
        let policy: EncryptedRoomPolicy

        init(devices: GhostDevices, policy: EncryptedRoomPolicy = .allowed) {
            self.devices = devices
            self.policy = policy
        }
    }

    /// Throws when the store keeps encryption keys that the configured pickle key does not open (checked at start:
    /// every ghost's device would be unusable).
    public func checkEncryptionKeys() async throws {
        try await context.ghostDevices?.checkPickleKey()
    }
}
