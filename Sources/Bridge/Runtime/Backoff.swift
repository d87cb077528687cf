/// The pauses between attempts while a server is unavailable: `first`, doubling each time, never past `longest`.
/// The homeserver's for a portal's sends, the DMs' calls and the appservice ping. Pure.
struct Backoff: Sendable, Equatable {
    var first: Duration = .seconds(1)
    var longest: Duration = .seconds(30)

    /// The pause after `attempt` failed attempts (0: after the first failure).
    func pause(after attempt: Int) -> Duration {
        min(first * (1 << min(max(attempt, 0), 16)), longest)
    }
}
