import Dispatch
import Foundation

/// Monotonic time in nanoseconds (`CLOCK_MONOTONIC`), cheap enough to stamp every message.
enum Clock {
    static func nanos() -> Int64 { Int64(bitPattern: DispatchTime.now().uptimeNanoseconds) }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func seconds(from start: Int64, to end: Int64) -> Double { Double(end - start) / 1e9 }
}

/// Order statistics of a sample of latencies (nanoseconds in, milliseconds out).
struct LatencySummary: Sendable {
    var count: Int
    var p50: Double
    var p99: Double
    var max: Double
    /// The sample, sorted (nanoseconds).
    var samples: [Int64]

    init(nanos: [Int64]) {
        let sorted = nanos.sorted()
        samples = sorted
        count = sorted.count
        func at(_ quantile: Double) -> Double {
            guard !sorted.isEmpty else { return .nan }
            let index = Swift.min(sorted.count - 1, Int((quantile * Double(sorted.count)).rounded(.up)) - 1)
            return Double(sorted[Swift.max(0, index)]) / 1e6
        }
        p50 = at(0.50)
        p99 = at(0.99)
        max = sorted.last.map { Double($0) / 1e6 } ?? .nan
    }

    /// The distribution of `a + b` for independent draws from two samples (e.g. two legs of a path).
    static func sum(_ a: LatencySummary, _ b: LatencySummary) -> LatencySummary {
        var sums: [Int64] = []
        sums.reserveCapacity(a.samples.count * b.samples.count)
        for x in a.samples { for y in b.samples { sums.append(x + y) } }
        return LatencySummary(nanos: sums)
    }
}

/// Sleeps until `deadline` (nanoseconds on ``Clock``); returns at once when it has passed.
func sleep(untilNanos deadline: Int64) async {
    let remaining = deadline - Clock.nanos()
    if remaining > 0 { try? await Task.sleep(nanoseconds: UInt64(remaining)) }
}

/// Polls `condition` every `interval` until it holds or `timeout` passes; returns whether it held.
func waitUntil(timeout: Duration, interval: Duration = .milliseconds(20), _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return await condition()
}

/// A benchmark step that could not complete (the run stops with this message).
struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Reports progress on stderr (the figures go to stdout).
func progress(_ text: String) {
    FileHandle.standardError.write(Data(("bench: " + text + "\n").utf8))
}
