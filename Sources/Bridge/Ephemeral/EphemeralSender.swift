import Synchronization

/// A portal's best-effort sends (typing, chat states, read markers), performed off the portal's path so they never
/// hold up messages: ``submit(_:)`` returns at once; one worker task, started on demand and ending when the outbox is
/// empty, performs them one at a time. While the homeserver or the XMPP server is slow only the latest send per
/// target waits (``EphemeralOutbox``), so nothing piles up. Owned by its ``Portal``, which calls ``finish()`` when
/// it ends (the worker is cancelled; what waits is dropped).
final class EphemeralSender: Sendable {
    private struct State {
        var outbox = EphemeralOutbox()
        var worker: Task<Void, Never>?
        var finished = false
    }

    private let state = Mutex(State())
    private let perform: @Sendable (EphemeralSend) async -> Void

    /// `perform` does the I/O of one send (and logs its failure: nothing is retried here).
    init(perform: @escaping @Sendable (EphemeralSend) async -> Void) {
        self.perform = perform
    }

    /// Queues `send` (replacing a waiting one to the same target) and starts the worker if it is idle. Safe from any context.
    func submit(_ send: EphemeralSend) {
        state.withLock { state in
            guard !state.finished else { return }
            state.outbox.put(send)
            guard state.worker == nil else { return }
            state.worker = Task { await self.work() }
        }
    }

    /// Performs sends until the outbox is empty; the worker then ends (a later submit starts a new one).
    private func work() async {
        while !Task.isCancelled, let next = state.withLock({ state -> EphemeralSend? in
            if let next = state.outbox.take() { return next }
            state.worker = nil
            return nil
        }) {
            await perform(next)
        }
    }

    /// Drops what waits and cancels the worker; later submits are ignored.
    func finish() {
        let worker = state.withLock { state -> Task<Void, Never>? in
            state.finished = true
            state.outbox = EphemeralOutbox()
            return state.worker
        }
        worker?.cancel()
    }
}
