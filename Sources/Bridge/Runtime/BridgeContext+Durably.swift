import IsthmusCommon

extension BridgeContext {
    /// Runs one store call (a write, or a read the caller cannot go on without). While the disk is full or the
    /// database out of reach (``StoreWriteGate``) it waits until the store can write again and retries, so the portal
    /// or the DMs pause instead of going on without the record; it gives up (rethrows) only when the bridge is
    /// stopping, or for any other failure. Runs on the caller's actor; does store I/O.
    func durably<T: Sendable>(isolation: isolated (any Actor)? = #isolation,
                              _ call: () async throws -> T) async throws -> T {
        while true {
            do {
                return try await call()
            } catch where writeGate.noteFailure(error) {
                guard await writeGate.waitUntilWritable() else { throw error }
            }
        }
    }

    /// After a failed store call: true once the store can write again when the failure was a full disk or an
    /// unreachable database, and the caller tries its whole step again (for steps of several reads, where
    /// ``durably(isolation:_:)`` would repeat only the one that failed); false at once for any other failure, or
    /// when the bridge is stopping.
    func storeIsBack(after error: any Error) async -> Bool {
        guard writeGate.noteFailure(error) else { return false }
        return await writeGate.waitUntilWritable()
    }
}
