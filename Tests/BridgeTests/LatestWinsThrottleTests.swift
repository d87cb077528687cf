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

/// The outbox of best-effort sends keeps only the latest per target, in the order targets first appeared.
@Suite struct EphemeralOutboxTests {
    @Test func theLatestSendPerTargetWinsAndTargetsKeepTheirPlace() {
        let ghost = UserID("@_xmpp_romeo:localhost")!, other = UserID("@_xmpp_juliet:localhost")!
        var outbox = EphemeralOutbox()
        outbox.put(.typing(ghost: ghost, true))
        outbox.put(.readReceipt(ghost: ghost, EventID("$1")!))
        outbox.put(.typing(ghost: other, true))
        outbox.put(.typing(ghost: ghost, false))
        outbox.put(.readReceipt(ghost: ghost, EventID("$2")!))
        var taken: [EphemeralSend] = []
        while let next = outbox.take() { taken.append(next) }
        #expect(taken == [.typing(ghost: ghost, false), .readReceipt(ghost: ghost, EventID("$2")!), .typing(ghost: other, true)])
        #expect(outbox.isEmpty)
    }
}

/// The portal's sender performs one send at a time off the portal's path; while one is on its way, later sends to the
/// same target replace each other, so a slow side never piles them up.
@Suite struct EphemeralSenderTests {
    @Test func whileOneSendIsSlowOnlyTheLatestPerTargetWaits() async throws {
        let ghost = UserID("@_xmpp_romeo:localhost")!
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let performed = Mutex<[EphemeralSend]>([])
        let sender = EphemeralSender { send in
            let first = performed.withLock { list in
                list.append(send)
                return list.count == 1
            }
            if first { for await _ in gate { break } }   // the first send hangs until the test opens the gate
        }
        sender.submit(.typing(ghost: ghost, true))
        try await eventually("the first send under way") { performed.withLock { $0.count } == 1 }
        sender.submit(.typing(ghost: ghost, false))
        sender.submit(.readReceipt(ghost: ghost, EventID("$1")!))
        sender.submit(.typing(ghost: ghost, true))
        open.yield()
        try await eventually("the rest performed") { performed.withLock { $0.count } == 3 }
        #expect(performed.withLock { $0 } == [.typing(ghost: ghost, true), .typing(ghost: ghost, true),
                                              .readReceipt(ghost: ghost, EventID("$1")!)])
        sender.finish()
    }
}
