import Synchronization

/// How many portals activate at once (issue 26: start-up memory).
///
/// An activation is one long burst of a portal's work — the bot's joins, the room's load, the archive catch-up, the
/// puppets' joins — and its async call stack is deep: measured with heaptrack, a start of 1,000 rooms held about
/// 75 MiB of task stacks at its peak, one per room activating at the same time. Past a few dozen rooms at once the
/// servers on either side are the bottleneck anyway, so the others wait their turn here, in the order they asked.
/// Thread-safe; waiting suspends, never blocks a thread.
final class ActivationGate: Sendable {
    /// Activations allowed at once by default: enough to keep both servers busy, few enough that their stacks stay
    /// small.
    static let defaultLimit = 64

    private struct State {
        var free: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(limit: Int = ActivationGate.defaultLimit) {
        precondition(limit > 0, "an activation gate needs at least one permit")
        state = Mutex(State(free: limit))
    }

    /// Takes a permit, waiting for one in arrival order.
    func enter() async {
        await withCheckedContinuation { continuation in
            let admitted = state.withLock { state -> Bool in
                guard state.free > 0 else {
                    state.waiters.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    /// How many wait for a permit now.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Gives a permit back: to the longest waiter, if any.
    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
