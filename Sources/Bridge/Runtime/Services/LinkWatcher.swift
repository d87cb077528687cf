import IsthmusStore

/// Notices links made or ended while the bridge runs (by `isthmus link/unlink`, the provisioning API, another
/// process): reads the store's link change counter every `interval` and calls `changed` when it moved (and once at
/// start). Runs until cancelled; a failed read keeps the last value.
struct LinkWatcher: BridgeService {
    let store: Store
    let interval: Duration
    let changed: @Sendable () -> Void

    func run() async {
        var lastVersion = -1
        while !Task.isCancelled {
            let version = (try? await store.linkChangeVersion()) ?? lastVersion
            if version != lastVersion {
                lastVersion = version
                changed()
            }
            try? await Task.sleep(for: interval)
        }
    }
}
