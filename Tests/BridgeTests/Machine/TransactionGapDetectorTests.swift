@testable import Bridge
import IsthmusCommon
import Testing

/// Which homeserver transactions may sit behind one that was never pushed.
@Suite struct TransactionGapDetectorTests {
    let t0 = ContinuousClock.now

    func id(_ value: String) -> TransactionID { TransactionID(value)! }

    @Test func aHoleInTheIDsWhileTheHomeserverRetriesAsksForACheck() {
        var detector = TransactionGapDetector(window: .seconds(120))
        detector.arm(now: t0)
        #expect(detector.observe(id("100"), now: t0) == .none)   // the first id is the baseline
        #expect(detector.observe(id("101"), now: t0) == .none)
        #expect(detector.observe(id("103"), now: t0) == .new)    // 102 was never pushed
        // Still open: 102 may be held on a slow connection with an earlier event of the same room (scripts/chaos, seed 11).
        #expect(detector.observe(id("104"), now: t0) == .open)
        #expect(detector.observe(id("102"), now: t0) == .none)   // its late delivery closes the hole
        #expect(detector.observe(id("105"), now: t0) == .none)
    }

    @Test func holesOutsideTheWindowAreOtherAppservicesTransactions() {
        var detector = TransactionGapDetector(window: .seconds(120))
        detector.arm(now: t0)
        #expect(detector.observe(id("7"), now: t0) == .none)
        #expect(detector.observe(id("9"), now: t0 + .seconds(1)) == .new)
        #expect(detector.observe(id("20"), now: t0 + .seconds(121)) == .none)   // the window closed 8's hole too
        #expect(detector.observe(id("21"), now: t0 + .seconds(122)) == .none)
        detector.arm(now: t0 + .seconds(200))   // a transaction failed
        #expect(detector.observe(id("25"), now: t0 + .seconds(201)) == .new)
    }

    @Test func idsThatAreNotNumbersAskWhileArmedOnly() {
        var detector = TransactionGapDetector(window: .seconds(10))
        detector.arm(now: t0)
        #expect(detector.observe(id("abc"), now: t0) == .new)
        #expect(detector.observe(nil, now: t0 + .seconds(9)) == .new)
        #expect(detector.observe(id("abc"), now: t0 + .seconds(10)) == .none)
    }

    @Test func aWideHoleIsTrackedByItsFirstIDsAndAReplayOpensNone() {
        var detector = TransactionGapDetector(window: .seconds(120))
        detector.arm(now: t0)
        #expect(detector.observe(id("1"), now: t0) == .none)
        #expect(detector.observe(id("1000"), now: t0) == .new)
        #expect(detector.missing.count == Int(TransactionGapDetector.maxTracked))
        for late in 2...65 { _ = detector.observe(id(String(late)), now: t0) }
        #expect(detector.observe(id("1001"), now: t0) == .none)
        #expect(detector.observe(id("500"), now: t0) == .none)   // a replay of an id never tracked
    }
}
