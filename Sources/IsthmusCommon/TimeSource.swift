import FoundationEssentials

/// Where the bridge reads time: monotonic time for timeouts, windows and retries; wall time for what is stored or
/// compared with servers' timestamps. Passed in everywhere the bridge reads time, so tests can move it themselves.
public struct TimeSource: Sendable {
    /// Monotonic now.
    public var now: @Sendable () -> ContinuousClock.Instant
    /// Wall-clock now.
    public var wallNow: @Sendable () -> Date

    public init(now: @escaping @Sendable () -> ContinuousClock.Instant, wallNow: @escaping @Sendable () -> Date) {
        self.now = now
        self.wallNow = wallNow
    }

    /// The process's clocks.
    public static let system = TimeSource(now: { ContinuousClock.now }, wallNow: { Date() })
}
