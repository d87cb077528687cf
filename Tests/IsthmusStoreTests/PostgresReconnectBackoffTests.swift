@testable import IsthmusStore
import Testing

/// The pool's reconnect wait, with time passed in.
@Suite struct PostgresReconnectBackoffTests {
    @Test func waitDoublesUpToTheMaximumAndResetsOnSuccess() {
        let start = ContinuousClock.now
        var backoff = PostgresReconnectBackoff(initial: .milliseconds(100), maximum: .milliseconds(350))
        #expect(backoff.mayConnect(at: start))

        backoff.connectFailed(at: start)
        #expect(!backoff.mayConnect(at: start + .milliseconds(99)))
        #expect(backoff.mayConnect(at: start + .milliseconds(100)))

        backoff.connectFailed(at: start)
        #expect(backoff.nextAttempt == start + .milliseconds(200))
        backoff.connectFailed(at: start)
        #expect(backoff.nextAttempt == start + .milliseconds(350))
        for _ in 0..<100 { backoff.connectFailed(at: start) }
        #expect(backoff.nextAttempt == start + .milliseconds(350))
        #expect(backoff.failures == 103)

        backoff.connected()
        #expect(backoff.mayConnect(at: start))
        backoff.connectFailed(at: start)
        #expect(backoff.nextAttempt == start + .milliseconds(100))
    }
}
