import Foundation
import IsthmusCommon
import Synchronization

/// A ``TimeSource`` that moves only when a test calls ``advance(by:)``: sleepers wake when the time they wait for is
/// reached, none before. `Sendable`; safe from any task.
public final class ManualTime: Sendable {
    private struct Sleeper {
        var id: Int
        var deadline: ContinuousClock.Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: ContinuousClock.Instant
        var wallNow: Date
        var nextID = 0
        var sleepers: [Sleeper] = []
    }

    private let state: Mutex<State>

    /// Starts at the process's current times.
    public init() {
        state = Mutex(State(now: .now, wallNow: Date()))
    }

    /// Monotonic now.
    public var now: ContinuousClock.Instant { state.withLock { $0.now } }

    /// The deadlines tasks are sleeping until, earliest first.
    public var sleeping: [ContinuousClock.Instant] { state.withLock { $0.sleepers.map(\.deadline).sorted() } }

    /// Moves both clocks forward and wakes the sleepers whose deadline has come.
    public func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now += duration
            state.wallNow += TimeInterval(duration.components.seconds) + TimeInterval(duration.components.attoseconds) / 1e18
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// The time source to hand to the code under test.
    public var timeSource: TimeSource {
        TimeSource(now: { self.now }, wallNow: { self.state.withLock { $0.wallNow } },
                   sleepUntil: { try await self.sleep(until: $0) })
    }

    private func sleep(until deadline: ContinuousClock.Instant) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resume: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }
}
