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
        #expect(detector.observe(id("100"), now: t0) == false)   // the first id is the baseline
        #expect(detector.observe(id("101"), now: t0) == false)
        #expect(detector.observe(id("103"), now: t0) == true)    // 102 was never pushed
        #expect(detector.observe(id("104"), now: t0) == false)
        #expect(detector.observe(id("102"), now: t0) == false)   // its late delivery
    }

    @Test func holesOutsideTheWindowAreOtherAppservicesTransactions() {
        var detector = TransactionGapDetector(window: .seconds(120))
        detector.arm(now: t0)
        #expect(detector.observe(id("7"), now: t0) == false)
        #expect(detector.observe(id("20"), now: t0 + .seconds(121)) == false)
        detector.arm(now: t0 + .seconds(200))   // a transaction failed
        #expect(detector.observe(id("25"), now: t0 + .seconds(201)) == true)
    }

    @Test func idsThatAreNotNumbersAskWhileArmedOnly() {
        var detector = TransactionGapDetector(window: .seconds(10))
        detector.arm(now: t0)
        #expect(detector.observe(id("abc"), now: t0) == true)
        #expect(detector.observe(nil, now: t0 + .seconds(9)) == true)
        #expect(detector.observe(id("abc"), now: t0 + .seconds(10)) == false)
    }
}
