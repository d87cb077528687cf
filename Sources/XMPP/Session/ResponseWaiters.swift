import Synchronization

/// Requests waiting for their answer: each has a key, a context to decide whether a stanza answers it, a deadline
/// and a continuation. Lock-protected (a `Mutex`), so that a task-cancellation handler — which cannot hop onto the
/// connection actor — can fail its waiter synchronously. `Sendable`; no I/O.
package final class ResponseWaiters<Key: Hashable & Sendable, Context: Sendable, Value: Sendable>: Sendable {
    private struct Entry {
        var context: Context
        var deadline: ContinuousClock.Instant
        /// Said in the timeout error, e.g. `iq 5f3a… to room@conference.localhost`.
        var label: String
        var continuation: CheckedContinuation<Value, any Error>
    }

    package init() {}

    private let entries = Mutex<[Key: Entry]>([:])

    /// Whether something waits under `key`.
    package func contains(_ key: Key) -> Bool { entries.withLock { $0[key] != nil } }

    /// Whether something waits under `key` whose context passes `test`.
    package func contains(_ key: Key, where test: (Context) -> Bool) -> Bool {
        entries.withLock { entries in entries[key].map { test($0.context) } ?? false }
    }

    /// Adds a waiter. Throws ``XMPPRequestError/requestInProgress(_:)`` when `key` is taken (the continuation is
    /// then left to the caller).
    package func register(
        _ key: Key, context: Context, deadline: ContinuousClock.Instant, label: String,
        continuation: CheckedContinuation<Value, any Error>
    ) throws(XMPPRequestError) {
        try entries.withLock { entries throws(XMPPRequestError) in
            guard entries[key] == nil else { throw .requestInProgress(label) }
            entries[key] = Entry(context: context, deadline: deadline, label: label, continuation: continuation)
        }
    }

    /// Resumes the waiter under `key` if `decide` turns its context and the candidate into a value. Returns whether
    /// it did (the candidate is then consumed).
    package func resolve(_ key: Key, _ decide: (Context) -> Value?) -> Bool {
        let resumed: (CheckedContinuation<Value, any Error>, Value)? = entries.withLock { entries in
            guard let entry = entries[key], let value = decide(entry.context) else { return nil }
            entries[key] = nil
            return (entry.continuation, value)
        }
        guard let (continuation, value) = resumed else { return false }
        continuation.resume(returning: value)
        return true
    }

    /// Fails the waiter under `key`, if any.
    package func fail(_ key: Key, with error: any Error) {
        entries.withLock { $0.removeValue(forKey: key) }?.continuation.resume(throwing: error)
    }

    /// Fails every waiter whose deadline has passed with a timeout naming it.
    package func expire(now: ContinuousClock.Instant) {
        let expired = entries.withLock { entries in
            let keys = entries.filter { $0.value.deadline <= now }.map(\.key)
            return keys.compactMap { entries.removeValue(forKey: $0) }
        }
        for entry in expired { entry.continuation.resume(throwing: XMPPRequestError.timeout(entry.label)) }
    }

    /// Fails every waiter (the connection ended).
    package func failAll(with error: any Error) {
        let all = entries.withLock { entries in
            defer { entries.removeAll() }
            return Array(entries.values)
        }
        for entry in all { entry.continuation.resume(throwing: error) }
    }
}
