import FoundationEssentials

/// Where the bridge reads time: monotonic time for timeouts, windows and retries; wall time for what is stored or
/// compared with servers' timestamps. Passed in everywhere the bridge reads time, so tests can move it themselves.
public struct TimeSource: Sendable {
    /// Monotonic now.
    public var now: @Sendable () -> ContinuousClock.Instant
    /// Wall-clock now.
    public var wallNow: @Sendable () -> Date
    /// Suspends until monotonic time reaches the instant (throws `CancellationError` when the task is cancelled first).
    public var sleepUntil: @Sendable (ContinuousClock.Instant) async throws -> Void

    public init(now: @escaping @Sendable () -> ContinuousClock.Instant, wallNow: @escaping @Sendable () -> Date,
                sleepUntil: @escaping @Sendable (ContinuousClock.Instant) async throws -> Void) {
        self.now = now
        self.wallNow = wallNow
        self.sleepUntil = sleepUntil
    }

    /// Suspends until ``now`` reaches `deadline`; throws `CancellationError` when the task is cancelled first.
    public func sleep(until deadline: ContinuousClock.Instant) async throws {
        try await sleepUntil(deadline)
    }

    /// The process's clocks.
    public static let system = TimeSource(now: { ContinuousClock.now }, wallNow: { Date() },
                                          sleepUntil: { try await Task.sleep(until: $0, clock: .continuous) })
}
