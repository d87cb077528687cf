import Foundation
import Synchronization

/// Stamps benchmark messages when they enter the system under test and when they leave it, by sequence number.
///
/// Bodies are `bench <run>.<seq>` (``body(_:)``); whoever sees a body leave calls ``MessageTracker/arrived(body:)``,
/// which finds the tracker of that run. A sender keeps at most `window` messages in flight with
/// ``waitForWindow(_:)``. Thread-safe.
final class MessageTracker: Sendable {
    private struct State {
        var sent: [Int64]
        var arrived: [Bool]
        var latencies: [Int64] = []
        var sentCount = 0
        var arrivedCount = 0
        var firstSent: Int64 = 0
        var lastArrival: Int64 = 0
        /// Resumed once more than `threshold` messages arrived.
        var windowWaiter: (threshold: Int, continuation: CheckedContinuation<Void, Never>)?
    }

    let run: Int
    let capacity: Int
    private let state: Mutex<State>

    private static let registry = Mutex<[Int: MessageTracker]>([:])
    private static let nextRun = Atomic<Int>(1)

    /// A tracker for `capacity` messages, registered until ``close()``.
    init(capacity: Int) {
        run = Self.nextRun.add(1, ordering: .relaxed).oldValue
        self.capacity = capacity
        state = Mutex(State(sent: [Int64](repeating: 0, count: capacity), arrived: [Bool](repeating: false, count: capacity)))
        Self.registry.withLock { $0[run] = self }
    }

    /// Unregisters (late arrivals are ignored).
    func close() { _ = Self.registry.withLock { $0.removeValue(forKey: run) } }

    /// The body of message `seq`.
    func body(_ seq: Int) -> String { "bench \(run).\(seq)" }

    /// Records that `seq` enters now.
    func sent(_ seq: Int) {
        let now = Clock.nanos()
        state.withLock { state in
            if state.sentCount == 0 { state.firstSent = now }
            state.sent[seq] = now
            state.sentCount += 1
        }
    }

    /// Records that `seq` left now (the first time only).
    func arrived(_ seq: Int) {
        let now = Clock.nanos()
        state.withLock { state in
            guard seq >= 0, seq < state.arrived.count, !state.arrived[seq], state.sent[seq] != 0 else { return }
            state.arrived[seq] = true
            state.arrivedCount += 1
            state.lastArrival = now
            state.latencies.append(now - state.sent[seq])
            if let waiter = state.windowWaiter, state.arrivedCount > waiter.threshold {
                state.windowWaiter = nil
                waiter.continuation.resume()
            }
        }
    }

    /// Finds the run and sequence number in `body` and records the arrival with that run's tracker.
    static func arrived(body: some Collection<UInt8>) {
        let bytes = Array(body)
        guard let (run, seq, _) = parse(bytes, from: 0) else { return }
        registry.withLock { $0[run] }?.arrived(seq)
    }

    /// Records every benchmark message found in `bytes` (a transaction holds several).
    static func arrivedAll(in bytes: [UInt8]) {
        var index = 0
        while let (run, seq, next) = parse(bytes, from: index) {
            registry.withLock { $0[run] }?.arrived(seq)
            index = next
        }
    }

    /// Finds the next `bench <run>.<seq>` in `bytes` from `start`; returns it and the index after it.
    static func parse(_ bytes: [UInt8], from start: Int) -> (run: Int, seq: Int, next: Int)? {
        let marker: [UInt8] = Array("bench ".utf8)
        var index = start
        while index + marker.count <= bytes.count {
            guard bytes[index] == marker[0], bytes[index + 1] == marker[1], bytes[index + 2] == marker[2],
                  bytes[index + 3] == marker[3], bytes[index + 4] == marker[4], bytes[index + 5] == marker[5] else {
                index += 1
                continue
            }
            index += marker.count
            var run = 0, seq = 0, inSeq = false, digits = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte >= 48 && byte <= 57 {
                    if inSeq { seq = seq * 10 + Int(byte - 48) } else { run = run * 10 + Int(byte - 48) }
                    digits += 1
                } else if byte == UInt8(ascii: "."), !inSeq {
                    inSeq = true
                } else {
                    break
                }
                index += 1
            }
            if inSeq && digits > 1 { return (run, seq, index) }
        }
        return nil
    }

    /// Waits until fewer than `limit` of the `issued` messages so far are still to arrive.
    func waitForWindow(_ limit: Int, issued: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            state.withLock { state in
                if issued - state.arrivedCount < limit {
                    continuation.resume()
                } else {
                    state.windowWaiter = (issued - limit, continuation)
                }
            }
        }
    }

    /// Waits until `count` messages arrived, or `timeout` passed; returns whether they did.
    func waitForArrivals(_ count: Int, timeout: Duration) async -> Bool {
        await waitUntil(timeout: timeout, interval: .milliseconds(2)) { arrivedCount >= count }
    }

    var arrivedCount: Int { state.withLock { $0.arrivedCount } }

    /// Messages per second from the first send to the last arrival, and the latencies.
    func results() -> (rate: Double, latency: LatencySummary, arrived: Int) {
        state.withLock { state in
            let span = Clock.seconds(from: state.firstSent, to: state.lastArrival)
            return (span > 0 ? Double(state.arrivedCount) / span : .nan, LatencySummary(nanos: state.latencies), state.arrivedCount)
        }
    }
}
