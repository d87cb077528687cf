import IsthmusStore

/// While the store refuses writes (``StoreWriteGate`` closed: a full disk, an unreachable database), tries a write
/// every `interval` and reopens the gate once one succeeds. Runs until cancelled.
struct StoreProbe: BridgeService {
    let store: Store
    let writeGate: StoreWriteGate
    let interval: Duration

    func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            if writeGate.isClosed, await store.probeWrite() { writeGate.reopen() }
        }
    }
}
