import MatrixClient

/// The device authorization grant's polling, as a value (RFC 8628 §3.4–3.5): when to ask the token endpoint again and
/// when to give up. No I/O and no clock: the caller feeds it each poll's outcome with the seconds passed since the
/// device code was issued, and waits as told.
///
/// - `authorization_pending`: poll again after the interval (the server's, else 5 s).
/// - `slow_down`: the interval grows by 5 s for this and every later poll (§3.5).
/// - An unanswered poll (network, 5xx): try again after the interval, doubling it up to 60 s (§3.5: "SHOULD use
///   exponential backoff").
/// - `access_denied`, `expired_token`, any other refusal, or the codes' lifetime passed: the login fails.
public struct DeviceGrantPolling: Sendable, Equatable {
    /// What one poll came back with.
    public enum Outcome: Sendable, Equatable {
        case tokens(OAuthTokenResponse)
        case refused(OAuthErrorCode?, message: String)
        case unanswered(String)
    }

    /// What to do next.
    public enum Step: Sendable, Equatable {
        /// Wait this many seconds, then poll.
        case poll(afterSeconds: Int)
        case done(OAuthTokenResponse)
        /// The login cannot finish; why, for the person at the terminal.
        case failed(String)
    }

    public private(set) var interval: Int
    /// Seconds the device code lives (from its `expires_in`).
    public let lifetime: Int
    private var backoff: Int?

    public init(_ authorization: DeviceAuthorization) {
        interval = max(1, authorization.interval ?? 5)
        lifetime = authorization.expiresIn
    }

    /// The first poll waits one interval: the person has not approved anything yet.
    public var first: Step { .poll(afterSeconds: interval) }

    /// The step after a poll whose outcome is `outcome`, `elapsed` seconds after the code was issued.
    public mutating func next(after outcome: Outcome, elapsed: Int) -> Step {
        switch outcome {
        case .tokens(let tokens):
            return .done(tokens)
        case .refused(.authorizationPending, _):
            backoff = nil
            return wait(elapsed)
        case .refused(.slowDown, _):
            interval += 5
            return wait(elapsed)
        case .refused(.accessDenied, _):
            return .failed("the sign-in was denied")
        case .refused(.expiredToken, _):
            return .failed("the code expired before anyone signed in")
        case .refused(_, let message):
            return .failed("the authorization server refused: \(message)")
        case .unanswered(let why):
            backoff = min(60, (backoff ?? interval) * 2)
            guard elapsed + (backoff ?? interval) < lifetime else { return .failed("the authorization server did not answer: \(why)") }
            return .poll(afterSeconds: backoff ?? interval)
        }
    }

    private func wait(_ elapsed: Int) -> Step {
        elapsed + interval < lifetime ? .poll(afterSeconds: interval) : .failed("the code expired before anyone signed in")
    }
}
