import Matrix
/// When a failed client call is tried again, and after how long. Pure; the client does the waiting.
///
/// Rate limits (HTTP 429 or `M_LIMIT_EXCEEDED`, spec "API standards §2.3.1") are waited out for
/// `retry_after_ms` (or `Retry-After`), capped. Network failures and 5xx answers are retried with exponential
/// backoff up to ``maxAttempts`` — only for calls that are safe to repeat (``Mode/full``).
public struct RetryPolicy: Sendable, Equatable {
    /// Which failures a call may be repeated after.
    public enum Mode: Sendable, Equatable {
        /// Idempotent calls (txnId sends, state, membership, profile, register): rate limits, network, 5xx.
        case full
        /// Calls that must not run twice (create room, ping): rate limits and refused connections only.
        case rateLimitOnly
    }

    /// What went wrong in one attempt.
    public enum Failure: Sendable, Equatable {
        /// No connection was made: the request was certainly not processed.
        case connectionRefused
        /// The request may or may not have reached the server (reset, timeout…).
        case transport
        /// The server answered `status` (with `errcode`, `retry_after_ms`, `Retry-After` seconds when present).
        case status(Int, errcode: MatrixErrorCode?, retryAfterMilliseconds: Int64?, retryAfterHeaderSeconds: Int?)
    }

    /// What to do next.
    public enum Decision: Sendable, Equatable {
        case retry(after: Duration)
        case fail
    }

    /// Attempts for network failures and 5xx, counting the first.
    public var maxAttempts: Int
    /// First backoff; doubles each attempt up to ``maxBackoff``.
    public var initialBackoff: Duration
    public var maxBackoff: Duration
    /// Rate-limit waits before giving up, and the longest single wait.
    public var maxRateLimitWaits: Int
    public var maxRateLimitWait: Duration

    public init(maxAttempts: Int = 5, initialBackoff: Duration = .milliseconds(250), maxBackoff: Duration = .seconds(8),
                maxRateLimitWaits: Int = 10, maxRateLimitWait: Duration = .seconds(60)) {
        self.maxAttempts = maxAttempts
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.maxRateLimitWaits = maxRateLimitWaits
        self.maxRateLimitWait = maxRateLimitWait
    }

    /// Decides after a failed attempt. `attempts` counts the attempts made so far that were not rate-limited;
    /// `rateLimitWaits` the rate-limit waits so far.
    public func decide(_ failure: Failure, mode: Mode, attempts: Int, rateLimitWaits: Int) -> Decision {
        switch failure {
        case .status(let status, let errcode, let retryAfterMilliseconds, let retryAfterSeconds)
            where status == 429 || errcode == .limitExceeded:
            guard rateLimitWaits < maxRateLimitWaits else { return .fail }
            let wait: Duration = if let retryAfterMilliseconds, retryAfterMilliseconds >= 0 {
                .milliseconds(retryAfterMilliseconds)
            } else if let retryAfterSeconds, retryAfterSeconds >= 0 {
                .seconds(retryAfterSeconds)
            } else {
                backoff(afterAttempt: rateLimitWaits + 1)
            }
            return .retry(after: min(wait, maxRateLimitWait))
        case .status(let status, _, _, _) where (500...599).contains(status):
            return mode == .full && attempts < maxAttempts ? .retry(after: backoff(afterAttempt: attempts)) : .fail
        case .status:
            return .fail
        case .connectionRefused:
            return attempts < maxAttempts ? .retry(after: backoff(afterAttempt: attempts)) : .fail
        case .transport:
            return mode == .full && attempts < maxAttempts ? .retry(after: backoff(afterAttempt: attempts)) : .fail
        }
    }

    /// `initialBackoff × 2^(attempt−1)`, capped at ``maxBackoff``.
    public func backoff(afterAttempt attempt: Int) -> Duration {
        var wait = initialBackoff
        for _ in 1..<max(1, min(attempt, 30)) {
            wait *= 2
            if wait >= maxBackoff { return maxBackoff }
        }
        return min(wait, maxBackoff)
    }
}
