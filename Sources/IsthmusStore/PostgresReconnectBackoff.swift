/// When a ``PostgresPool`` may try to connect again after failing: a wait that starts at `initial`, doubles after each
/// failure up to `maximum`, and resets on success. A value type with time passed in; no I/O.
///
/// While the wait runs, callers fail at once with the last connection error instead of each blocking for a connect
/// timeout against a database that is down.
struct PostgresReconnectBackoff: Sendable, Equatable {
    /// The wait after the first failure.
    var initial: Duration = .milliseconds(100)
    /// The longest wait.
    var maximum: Duration = .seconds(5)
    /// Failures since the last success.
    private(set) var failures = 0
    /// The earliest time of the next attempt (nil: now).
    private(set) var nextAttempt: ContinuousClock.Instant?

    init(initial: Duration = .milliseconds(100), maximum: Duration = .seconds(5)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// Whether a connection attempt may start at `now`.
    func mayConnect(at now: ContinuousClock.Instant) -> Bool {
        nextAttempt.map { now >= $0 } ?? true
    }

    /// An attempt that started at `now` failed: the next one waits longer.
    mutating func connectFailed(at now: ContinuousClock.Instant) {
        var wait = initial
        for _ in 0..<min(failures, 32) where wait < maximum { wait *= 2 }
        failures += 1
        nextAttempt = now + min(wait, maximum)
    }

    /// An attempt succeeded: the next failure starts over from `initial`.
    mutating func connected() {
        failures = 0
        nextAttempt = nil
    }
}
