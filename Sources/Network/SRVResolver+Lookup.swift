import Dispatch
import IsthmusCommon
import Synchronization

extension SRVResolver {
    /// The SRV records of `name`, none when it has none (NXDOMAIN, or no SRV data), looked up on a thread of its own so
    /// that Swift's cooperative pool never blocks. Returns within `timeout` whatever the resolver does (its thread then
    /// ends on its own), and at once when the task is cancelled.
    public func lookup(_ name: String, timeout: Duration) async throws(SRVLookupError) -> [SRVRecord] {
        let outcome = LookupOutcome()
        let resolver = self
        do {
            try DedicatedThread.start(name: "isthmus-dns") { outcome.finish(resolver.query(name, timeout: timeout)) }
        } catch {
            throw .failed(name: name, reason: error.description)
        }
        let (seconds, attoseconds) = timeout.components
        let milliseconds = Int(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
            outcome.finish(.failure(.timedOut(name: name)))
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { outcome.wait(with: $0) }
        } onCancel: {
            outcome.finish(.failure(.cancelled(name: name)))
        }
        return try result.get()
    }
}

/// Where the first of a lookup's thread, its timer and a cancellation to finish leaves the result; the later ones
/// are ignored. Whoever comes second of the waiter and the first result resumes the waiter.
private final class LookupOutcome: Sendable {
    private struct State {
        var result: Result<[SRVRecord], SRVLookupError>?
        var waiter: CheckedContinuation<Result<[SRVRecord], SRVLookupError>, Never>?
    }

    private let state = Mutex(State())

    func finish(_ result: Result<[SRVRecord], SRVLookupError>) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<[SRVRecord], SRVLookupError>, Never>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: result)
    }

    func wait(with waiter: CheckedContinuation<Result<[SRVRecord], SRVLookupError>, Never>) {
        let result = state.withLock { state -> Result<[SRVRecord], SRVLookupError>? in
            if state.result == nil { state.waiter = waiter }
            return state.result
        }
        if let result { waiter.resume(returning: result) }
    }
}
