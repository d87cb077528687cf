import Synchronization

/// A portal's queue of events: many producers (the XMPP task, the appservice handler, the control loop, timers), one
/// consumer (the portal), arrival order kept.
///
/// Hand-written rather than an `AsyncStream` because the consumer must be able to take everything waiting without
/// suspending (``takeAll()``): the portal handles each burst in a short-lived child task, so the deep async call
/// stacks of its work are freed when the burst ends. A long-lived task keeps the memory of its deepest stack for as
/// long as it lives (measured: ~27 KiB per task after a 100-deep call chain) — with 1,000 rooms that is tens of MiB.
final class PortalQueue: Sendable {
    private struct State {
        var events: [PortalQueue.Entry] = []
        var waiter: CheckedContinuation<Void, Never>?
        var finished = false
    }

    private let state = Mutex(State())

    /// An event and, for a stanza of client mode's account, the receipt to give once its effect is durable.
    struct Entry: Sendable {
        var event: PortalEvent
        var receipt: XMPPReceipt?
    }

    /// Queues an event; ignored after ``finish()`` (its receipt then never given). Safe from any context.
    func enqueue(_ event: PortalEvent, receipt: XMPPReceipt? = nil) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.finished else { return nil }
            state.events.append(Entry(event: event, receipt: receipt))
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// No more events will be taken after the ones queued.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Waits until there is an event or the queue is finished. One consumer only.
    func waitForEvents() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if !state.events.isEmpty || state.finished { return true }
                state.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Everything queued now, in order (empty when nothing is waiting), and whether the queue is finished.
    func takeAll() -> (events: [Entry], finished: Bool) {
        state.withLock { state in
            let taken = state.events
            state.events = []
            return (taken, state.finished)
        }
    }
}
