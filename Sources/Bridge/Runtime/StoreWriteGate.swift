import IsthmusCommon
import IsthmusStore
import Synchronization

/// Whether the store takes writes, shared by everything that writes to it. When a store call fails for want of room
/// (``StoreError/isDiskFull``) or because the database cannot be reached (``StoreError/Kind/unavailable``: PostgreSQL
/// restarting or out of reach, SQLite locked by another process past the busy timeout) the gate closes: the appservice
/// handler refuses transactions (the homeserver retries them), the XMPP task stops taking events, and portals wait in
/// ``waitUntilWritable()`` before retrying the call that failed. The bridge's probe (``Store/probeWrite()``) reopens it
/// once the database takes a write again. Logs once per closing and once per reopening. Thread-safe (a mutex); no I/O.
final class StoreWriteGate: Sendable {
    private struct State {
        var closed = false
        var finished = false
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }

    private let state = Mutex(State())
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Whether a store call failed for want of room or of the database and no probe has succeeded since.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Looks at a failed store call: true (and the gate closes) when it failed because the disk is full or the
    /// database cannot be reached — the call is worth retrying once the gate reopens.
    func noteFailure(_ error: any Error) -> Bool {
        guard let error = error as? StoreError, error.isDiskFull || error.kind == .unavailable else { return false }
        let closing = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        if closing, error.isDiskFull {
            logger.error("The disk is full: the bridge stops taking messages until the store can write again",
                         metadata: ["error": "\(error)"])
        } else if closing {
            logger.error("The store cannot be reached: the bridge stops taking messages until it can write again",
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
                if !state.closed { return true }
                state.waiters.append(continuation)
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// A probe write succeeded: everyone waiting retries.
    func reopen() {
        let waiters = state.withLock { state in
            guard state.closed else { return [CheckedContinuation<Bool, Never>]?.none }
            state.closed = false
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

/// A homeserver transaction refused because the store's disk is full or its database out of reach (the listener
/// answers 500; the homeserver retries).
struct StoreClosedError: Error, CustomStringConvertible {
    var description: String { "the store cannot write (a full disk or an unreachable database): the transaction is not recorded" }
}
