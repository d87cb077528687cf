import Synchronization

/// A queue of values arriving asynchronously, read with deadlines: ``next(within:where:)`` returns the first value
/// matching a predicate (leaving the others queued, in order) or throws ``WaitTimeout``. For tests. `Sendable`;
/// one reader at a time.
public final class AsyncQueue<Element: Sendable>: Sendable {
    private struct Waiter {
        var matches: @Sendable (Element) -> Bool
        var continuation: CheckedContinuation<Element, any Error>
    }

    private struct State {
        var buffer: [Element] = []
        var waiter: Waiter?
        var finished = false
        /// Why the source ended, when it failed: readers get this instead of ``Finished``.
        var failure: (any Error)?
    }

    /// Raised when the queue finished before a matching value came.
    public struct Finished: Error, CustomStringConvertible {
        public var description: String { "the source finished before the awaited value arrived" }
    }

    private let state = Mutex(State())
    private let pump = Mutex<Task<Void, Never>?>(nil)

    public init() {}

    /// A queue filled from `sequence` by a task the queue owns (cancelled by ``stop()`` or when the queue goes away).
    /// When the sequence throws, readers get its error once the values before it are read.
    public static func collecting<S: AsyncSequence & Sendable>(_ sequence: S) -> AsyncQueue<Element> where S.Element == Element {
        let queue = AsyncQueue<Element>()
        let task = Task { [weak queue] in
            do {
                for try await element in sequence { queue?.append(element) }
                queue?.finish()
            } catch is CancellationError {
                queue?.finish()
            } catch {
                queue?.finish(throwing: error)
            }
        }
        queue.pump.withLock { $0 = task }
        return queue
    }

    deinit { pump.withLock { $0?.cancel() } }

    /// Stops filling from the source sequence.
    public func stop() { pump.withLock { $0?.cancel() } }

    /// Adds a value (hands it to the waiting reader if it matches).
    public func append(_ element: Element) {
        let waiter: Waiter? = state.withLock { state in
            if let waiter = state.waiter, waiter.matches(element) {
                state.waiter = nil
                return waiter
            }
            state.buffer.append(element)
            return nil
        }
        waiter?.continuation.resume(returning: element)
    }

    /// No more values will come. With `error`, the source failed: a reader waiting for a value that is not queued
    /// gets `error` (never a silent end), now or later.
    public func finish(throwing error: (any Error)? = nil) {
        let waiter = state.withLock { state in
            state.finished = true
            state.failure = error
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.continuation.resume(throwing: error ?? Finished())
    }

    /// Everything queued and not yet read.
    public var pending: [Element] { state.withLock { $0.buffer } }

    /// Removes and returns the first queued-or-arriving value that `matches`, waiting at most `seconds`.
    public func next(
        within seconds: Double = 10, _ what: String = "a value", where matches: @escaping @Sendable (Element) -> Bool = { _ in true }
    ) async throws -> Element {
        try await withDeadline(what, seconds: seconds) { try await self.take(matches) }
    }

    private func take(_ matches: @escaping @Sendable (Element) -> Bool) async throws -> Element {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let immediate: Result<Element, any Error>? = state.withLock { state in
                    if let index = state.buffer.firstIndex(where: matches) { return .success(state.buffer.remove(at: index)) }
                    if state.finished { return .failure(state.failure ?? Finished()) }
                    state.waiter = Waiter(matches: matches, continuation: continuation)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }
}
