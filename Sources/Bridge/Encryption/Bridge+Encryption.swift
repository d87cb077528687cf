extension Bridge {
    /// `encryption.allow`: the ghosts' encryption devices, shared with the Matrix link that encrypts their messages.
    public struct EncryptionWiring: Sendable {
        let devices: GhostDevices

        init(devices: GhostDevices) {
            self.devices = devices
        }
    }

    /// Throws when the store keeps encryption keys that the configured pickle key does not open (checked at start:
    /// every ghost's device would be unusable).
    public func checkEncryptionKeys() async throws {
        try await context.ghostDevices?.checkPickleKey()
    }
}
