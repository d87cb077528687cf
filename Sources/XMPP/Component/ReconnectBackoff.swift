/// Exponential backoff with jitter between reconnect attempts: the n-th delay is drawn uniformly from
/// `[base/2, base]` with `base = min(maximum, initial × 2ⁿ)`, so a fleet of restarted bridges does not reconnect in
/// lock-step while each still backs off. Pure value type; randomness is injected.
public struct ReconnectBackoff: Sendable, Hashable {
    /// The base delay of the first attempt.
    public var initial: Duration
    /// The cap on the base delay.
    public var maximum: Duration
    /// Attempts since the last ``reset()``.
    public private(set) var attempt = 0

    /// A `maximum` below `initial` is raised to `initial`.
    public init(initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = max(initial, maximum)
    }

    /// The delay before the next attempt; advances the attempt count.
    public mutating func nextDelay(using generator: inout some RandomNumberGenerator) -> Duration {
        let base = min(maximum, initial * Double(1 << min(attempt, 30)))
        attempt += 1
        return base * Double.random(in: 0.5...1.0, using: &generator)
    }

    /// Starts over after a connection that worked.
    public mutating func reset() { attempt = 0 }
}
