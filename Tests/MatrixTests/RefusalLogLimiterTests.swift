import IsthmusCommon
import Testing

/// The refusal log's rate limit with injected time: one line per (address, reason) per minute, with a count.
@Suite struct RefusalLogLimiterTests {
    let t0 = ContinuousClock.now
    let attacker = RefusalLogLimiter.Key(address: "203.0.113.7", reason: "wrong_token")

    @Test func manyRefusalsInAMinuteAreOneLineThenTheNextCarriesTheCount() {
        var limiter = RefusalLogLimiter()
        #expect(limiter.refused(attacker, now: t0)?.suppressed == 0)
        for second in 1...59 {
            #expect(limiter.refused(attacker, now: t0 + .seconds(second)) == nil)
            #expect(limiter.refused(attacker, now: t0 + .seconds(second) + .milliseconds(500)) == nil)
        }
        let next = limiter.refused(attacker, now: t0 + .seconds(60))
        #expect(next?.key == attacker)
        #expect(next?.suppressed == 118)
        #expect(limiter.refused(attacker, now: t0 + .seconds(61)) == nil)
        #expect(limiter.refused(attacker, now: t0 + .seconds(200))?.suppressed == 1)
    }

    @Test func eachAddressAndReasonHasItsOwnMinute() {
        var limiter = RefusalLogLimiter()
        let otherReason = RefusalLogLimiter.Key(address: attacker.address, reason: "missing_token")
        let otherAddress = RefusalLogLimiter.Key(address: "198.51.100.1", reason: attacker.reason)
        #expect(limiter.refused(attacker, now: t0) != nil)
        #expect(limiter.refused(otherReason, now: t0) != nil)
        #expect(limiter.refused(otherAddress, now: t0) != nil)
        #expect(limiter.refused(attacker, now: t0 + .seconds(1)) == nil)
        #expect(limiter.refused(otherReason, now: t0 + .seconds(1)) == nil)
    }

    @Test func manySourcesAreCountedUnderOtherOnceTheTableIsFull() {
        var limiter = RefusalLogLimiter(interval: .seconds(60), capacity: 4)
        for index in 0..<4 {
            let key = RefusalLogLimiter.Key(address: "10.0.0.\(index)", reason: "wrong_token")
            #expect(limiter.refused(key, now: t0) != nil)
            #expect(limiter.refused(key, now: t0) == nil)  // something to report: kept
        }
        let fifth = limiter.refused(.init(address: "10.0.0.9", reason: "wrong_token"), now: t0)
        #expect(fifth?.key.address == RefusalLogLimiter.overflowAddress)
        #expect(limiter.refused(.init(address: "10.0.0.10", reason: "wrong_token"), now: t0) == nil)
        // A minute later the quiet pairs are forgotten, and new sources get their own line again.
        var quiet = RefusalLogLimiter(interval: .seconds(60), capacity: 2)
        _ = quiet.refused(.init(address: "a", reason: "r"), now: t0)
        _ = quiet.refused(.init(address: "b", reason: "r"), now: t0)
        #expect(quiet.refused(.init(address: "c", reason: "r"), now: t0 + .seconds(61))?.key.address == "c")
    }
}
