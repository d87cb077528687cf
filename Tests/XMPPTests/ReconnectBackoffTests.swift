import IsthmusCommon
import TestSupport
import Testing
import XMLStream
import XMPP

/// Reconnect delays grow exponentially, stay within bounds and are jittered.
@Suite struct ReconnectBackoffTests {
    @Test func delaysDoubleUpToTheMaximumWithJitter() {
        var backoff = ReconnectBackoff(initial: .seconds(1), maximum: .seconds(30))
        var generator = SeededGenerator(seed: 42)
        let delays = (0..<8).map { _ in backoff.nextDelay(using: &generator) }
        let bases: [Duration] = [1, 2, 4, 8, 16, 30, 30, 30].map { .seconds($0) }
        for (delay, base) in zip(delays, bases) {
            #expect(delay >= base / 2 && delay <= base, "\(delay) not in [\(base / 2), \(base)]")
        }
        #expect(Set(delays.suffix(3)).count == 3, "the capped delays should be jittered, got \(delays.suffix(3))")
        backoff.reset()
        #expect(backoff.nextDelay(using: &generator) <= .seconds(1))
    }
}
