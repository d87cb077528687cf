@testable import Bridge
import Foundation
import IsthmusCommon
import Synchronization
import Testing
import TestSupport

/// The throttle behind typing notices, chat states and read markers: at most one value per key per window, the latest
/// winning, with time passed in.
@Suite struct LatestWinsThrottleTests {
    let t0 = ContinuousClock.now
    let alice = UserID("@alice:localhost")!
    let bob = UserID("@bob:localhost")!

    @Test func theFirstValueGoesOutAndALaterOneWaitsForTheWindow() {
        var throttle = LatestWinsThrottle<UserID, String>(interval: .seconds(10))
        #expect(throttle.offer("s1", for: alice, now: t0) == "s1")
        #expect(throttle.nextDeadline == nil)
        #expect(throttle.offer("s2", for: alice, now: t0 + .seconds(1)) == nil)
        #expect(throttle.offer("s3", for: alice, now: t0 + .seconds(2)) == nil)
        #expect(throttle.nextDeadline == t0 + .seconds(10))
        #expect(throttle.takeDue(now: t0 + .seconds(9)).isEmpty)
        let due = throttle.takeDue(now: t0 + .seconds(10))
        #expect(due.map(\.key) == [alice] && due.map(\.value) == ["s3"], "the latest wins")
        #expect(throttle.nextDeadline == nil)
        // The window now runs from the flush.
        #expect(throttle.offer("s4", for: alice, now: t0 + .seconds(15)) == nil)
        #expect(throttle.nextDeadline == t0 + .seconds(20))
    }

    @Test func keysHaveTheirOwnWindows() {
        var throttle = LatestWinsThrottle<UserID, String>(interval: .seconds(10))
        #expect(throttle.offer("a1", for: alice, now: t0) == "a1")
        #expect(throttle.offer("b1", for: bob, now: t0 + .seconds(1)) == "b1")
        #expect(throttle.offer("a2", for: alice, now: t0 + .seconds(2)) == nil)
        #expect(throttle.offer("b2", for: bob, now: t0 + .seconds(3)) == nil)
        #expect(throttle.nextDeadline == t0 + .seconds(10))
        #expect(throttle.takeDue(now: t0 + .seconds(10)).map(\.value) == ["a2"])
        #expect(throttle.nextDeadline == t0 + .seconds(11))
        #expect(throttle.takeDue(now: t0 + .seconds(11)).map(\.value) == ["b2"])
    }

    @Test func aValueEqualToTheLastSentIsNotSentAgain() {
        var throttle = LatestWinsThrottle<UserID, String>(interval: .seconds(3))
        #expect(throttle.offer("composing", for: alice, now: t0) == "composing")
        // Within the window: a change back to what went out cancels the waiting one.
        #expect(throttle.offer("paused", for: alice, now: t0 + .seconds(1)) == nil)
        #expect(throttle.offer("composing", for: alice, now: t0 + .seconds(2)) == nil)
        #expect(throttle.nextDeadline == nil)
        #expect(throttle.takeDue(now: t0 + .seconds(5)).isEmpty)
        // After the window: still the same, still nothing.
        #expect(throttle.offer("composing", for: alice, now: t0 + .seconds(60)) == nil)
        #expect(throttle.offer("paused", for: alice, now: t0 + .seconds(61)) == "paused")
        #expect(throttle.lastSent(alice) == "paused")
    }

    @Test func anEqualValueGoesOutAgainAfterRepeatAfter() {
        var throttle = LatestWinsThrottle<UserID, Bool>(interval: .seconds(2), repeatAfter: .seconds(10))
        #expect(throttle.offer(true, for: alice, now: t0) == true)
        #expect(throttle.offer(true, for: alice, now: t0 + .seconds(5)) == nil)
        #expect(throttle.offer(true, for: alice, now: t0 + .seconds(10)) == true, "refreshed")
        #expect(throttle.offer(false, for: alice, now: t0 + .seconds(11)) == nil)
        #expect(throttle.takeDue(now: t0 + .seconds(12)).map(\.value) == [false])
    }
}
