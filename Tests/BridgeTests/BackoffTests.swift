@testable import Bridge
import Testing

/// The pauses between attempts while a server is unavailable.
@Suite struct BackoffTests {
    @Test func doublesFromTheFirstPauseUpToTheLongest() {
        let backoff = Backoff()
        #expect((0..<7).map { backoff.pause(after: $0) } == [1, 2, 4, 8, 16, 30, 30].map { Duration.seconds($0) })
        #expect(backoff.pause(after: 1_000) == .seconds(30))
    }

    @Test func theAppservicePingStartsAtHalfASecond() {
        let backoff = Backoff(first: .milliseconds(500))
        #expect((0..<3).map { backoff.pause(after: $0) } == [500, 1_000, 2_000].map { Duration.milliseconds($0) })
    }
}
