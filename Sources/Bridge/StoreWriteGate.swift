import IsthmusCommon
import IsthmusStore
import Synchronization

/// Whether the store takes writes, shared by everything that writes to it. When a write fails for want of room
/// (``StoreError/isDiskFull``) the gate closes: the appservice handler refuses transactions (the homeserver retries them), the XMPP task stops taking
/// events, and portals wait in ``waitUntilWritable()`` before retrying the write that failed. The bridge's probe
/// (``Store/probeWrite()``) reopens it once the database can grow again. Logs once per closing and once per reopening.
/// Thread-safe (a mutex); no I/O.
final class StoreWriteGate: Sendable {
    private struct State {
        var full = false
        var finished = false
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }

    private let state = Mutex(State())
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Whether the last write failed for want of room and no probe has succeeded since.
    var isFull: Bool { state.withLock { $0.full } }

    /// Looks at a failed write: true (and the gate closes) when it failed because the disk is full.
    func noteFailure(_ error: any Error) -> Bool {
        guard (error as? StoreError)?.isDiskFull == true else { return false }
        let closing = state.withLock { state in
            defer { state.full = true }
            return !state.full
        }
        if closing {
            logger.error("The disk is full: the bridge stops taking messages until the store can write again",
                         metadata: ["error": "\(error)"])
        }
        return true
    }

    /// Returns at once while writes succeed; otherwise waits until ``reopen()``. False when the bridge is stopping
    /// (``finish()``): the caller gives up instead of retrying.
    func waitUntilWritable() async -> Bool {
        await withCheckedContinuation { continuation in
            let answer: Bool? = state.withLock { state in
                if state.finished { return false }
                if !state.full { return true }
                state.waiters.append(continuation)
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// A probe write succeeded: everyone waiting retries.
    func reopen() {
        let waiters = state.withLock { state in
            guard state.full else { return [CheckedContinuation<Bool, Never>]?.none }
            state.full = false
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return }
        logger.notice("The store can write again: the bridge takes messages again")
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// The bridge is stopping: waiters give up.
    func finish() {
        let waiters = state.withLock { state in
            state.finished = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }
}

/// A homeserver transaction refused because the disk is full (the listener answers 500; the homeserver retries).
struct StoreFullError: Error, CustomStringConvertible {
    var description: String { "the disk is full: the store cannot record the transaction" }
}
