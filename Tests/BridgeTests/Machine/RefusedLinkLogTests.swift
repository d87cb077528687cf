@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix
import Media
import Testing
import XMPP

/// Refused media links (a scanner guessing signatures) are logged at most once a minute, with the count held back.
@Suite struct RefusedLinkLogTests {
    @Test func oneLineAMinuteCarryingTheSuppressedCount() {
        let log = RefusedLinkLog(interval: .seconds(60))
        let t0 = ContinuousClock.now
        #expect(log.refused(now: t0) == 0)
        #expect(log.refused(now: t0 + .seconds(1)) == nil)
        #expect(log.refused(now: t0 + .seconds(59)) == nil)
        #expect(log.refused(now: t0 + .seconds(60)) == 2)
        #expect(log.refused(now: t0 + .seconds(61)) == nil)
    }
}
