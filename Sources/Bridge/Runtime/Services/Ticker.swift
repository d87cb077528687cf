/// Calls `tick` every `interval` (first after one interval) until cancelled: the bridge's periodic self-checks.
struct Ticker: BridgeService {
    let interval: Duration
    let tick: @Sendable () -> Void

    func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            tick()
        }
    }
}
