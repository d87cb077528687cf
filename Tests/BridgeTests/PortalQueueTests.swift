@testable import Bridge
import IsthmusCommon
import Testing

/// The portal's event queue: arrival order, bursts taken whole, waiting, and the end.
@Suite struct PortalQueueTests {
    @Test func burstsComeOutWholeInArrivalOrder() async {
        let queue = PortalQueue()
        queue.enqueue(.activate)
        queue.enqueue(.selfCheck)
        await queue.waitForEvents()
        #expect(queue.takeAll().events.map(\.event) == [.activate, .selfCheck])
        #expect(queue.takeAll().events.map(\.event) == [])
        queue.enqueue(.timelineGap)
        #expect(queue.takeAll().events.map(\.event) == [.timelineGap])
    }

    @Test func aWaitingConsumerWakesForTheNextEventAndForTheEnd() async {
        let queue = PortalQueue()
        async let woken: Void = queue.waitForEvents()
        queue.enqueue(.retryInbox)
        await woken
        let taken = queue.takeAll()
        #expect(taken.events.map(\.event) == [.retryInbox] && taken.finished == false)
        async let ended: Void = queue.waitForEvents()
        queue.finish()
        await ended
        queue.enqueue(.activate)   // after the end: dropped
        let last = queue.takeAll()
        #expect(last.events.map(\.event) == [] && last.finished == true)
    }

    @Test func eventsQueuedBeforeTheEndAreStillTaken() async {
        let queue = PortalQueue()
        queue.enqueue(.checkTimeline)
        queue.finish()
        await queue.waitForEvents()
        let taken = queue.takeAll()
        #expect(taken.events.map(\.event) == [.checkTimeline] && taken.finished == true)
    }
}
