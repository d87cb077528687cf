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
        #expect(queue.takeAll().events == [.activate, .selfCheck])
        #expect(queue.takeAll().events == [])
        queue.enqueue(.timelineGap)
        #expect(queue.takeAll().events == [.timelineGap])
    }

    @Test func aWaitingConsumerWakesForTheNextEventAndForTheEnd() async {
        let queue = PortalQueue()
        async let woken: Void = queue.waitForEvents()
        queue.enqueue(.retryInbox)
        await woken
        #expect(queue.takeAll() == ([.retryInbox], false))
        async let ended: Void = queue.waitForEvents()
        queue.finish()
        await ended
        queue.enqueue(.activate)   // after the end: dropped
        #expect(queue.takeAll() == ([], true))
    }

    @Test func eventsQueuedBeforeTheEndAreStillTaken() async {
        let queue = PortalQueue()
        queue.enqueue(.checkTimeline)
        queue.finish()
        await queue.waitForEvents()
        #expect(queue.takeAll() == ([.checkTimeline], true))
    }
}
