import FoundationEssentials

/// The bridge's time source: monotonic time for timeouts and windows, wall time for what is stored or compared with
/// servers' timestamps. Injected everywhere the bridge reads time (tests move it themselves).
public struct BridgeClock: Sendable {
    /// Monotonic now.
    public var now: @Sendable () -> ContinuousClock.Instant
    /// Wall-clock now.
    public var wallNow: @Sendable () -> Date

    public init(now: @escaping @Sendable () -> ContinuousClock.Instant, wallNow: @escaping @Sendable () -> Date) {
        self.now = now
        self.wallNow = wallNow
    }

    /// The process's clocks.
    public static let system = BridgeClock(now: { ContinuousClock.now }, wallNow: { Date() })
}
