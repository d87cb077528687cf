import Foundation

/// Ways of offering benchmark messages: as fast as they are taken (a bounded window in flight) or at a fixed rate.
enum Load {
    /// What a load run measured.
    struct Result {
        /// Messages per second from the first entering to the last leaving.
        var rate: Double
        var latency: LatencySummary
        var arrived: Int
        var total: Int
        /// The rate actually offered (paced runs).
        var offered: Double
        /// CPU seconds the measured process used during the run, until it was idle again (nil when none is measured).
        var cpuSeconds: Double?
        /// Messages per second from the first entering until the measured process was idle again (it may still be
        /// working after the last message left, e.g. on the reflections of its own messages).
        var rateUntilIdle: Double = .nan

        /// CPU microseconds per message.
        var cpuMicrosPerMessage: Double { (cpuSeconds ?? .nan) / Double(max(arrived, 1)) * 1e6 }
    }

    /// Sends `total` messages keeping at most `window` in flight. `send` must stamp the message as sent (directly or
    /// through whoever writes it) and hand it over.
    static func windowed(total: Int, window: Int, timeout: Duration, measuring pid: Int32? = nil,
                         _ send: (MessageTracker, Int) async throws -> Void) async throws -> Result {
        let tracker = MessageTracker(capacity: total)
        defer { tracker.close() }
        let before = pid.flatMap(ProcessStats.read)
        let start = Clock.nanos()
        for seq in 0..<total {
            await tracker.waitForWindow(window, issued: seq)
            try await send(tracker, seq)
        }
        return try await finish(tracker, total: total, start: start, timeout: timeout, pid: pid, before: before)
    }

    /// Sends `total` messages at `rate` per second (open loop: nothing waits for arrivals).
    static func paced(total: Int, rate: Double, timeout: Duration, measuring pid: Int32? = nil,
                      _ send: (MessageTracker, Int) async throws -> Void) async throws -> Result {
        let tracker = MessageTracker(capacity: total)
        defer { tracker.close() }
        let before = pid.flatMap(ProcessStats.read)
        let start = Clock.nanos()
        let interval = 1e9 / rate
        for seq in 0..<total {
            let due = start + Int64(Double(seq) * interval)
            if due > Clock.nanos() + 200_000 { await sleep(untilNanos: due) }
            try await send(tracker, seq)
        }
        return try await finish(tracker, total: total, start: start, timeout: timeout, pid: pid, before: before)
    }

    private static func finish(_ tracker: MessageTracker, total: Int, start: Int64, timeout: Duration, pid: Int32?,
                               before: ProcessStats?) async throws -> Result {
        let sentEnd = Clock.nanos()
        let all = await tracker.waitForArrivals(total, timeout: timeout)
        var idleAt = Clock.nanos()
        var after: ProcessStats?
        if let pid { (idleAt, after) = await ProcessStats.waitForIdle(pid: pid) }
        let (rate, latency, arrived) = tracker.results()
        if !all { progress("only \(arrived) of \(total) messages arrived within \(timeout)") }
        let cpu = before.flatMap { b in after.map { $0.cpuSeconds - b.cpuSeconds } }
        var result = Result(rate: rate, latency: latency, arrived: arrived, total: total,
                            offered: Double(total) / max(Clock.seconds(from: start, to: sentEnd), 1e-9), cpuSeconds: cpu)
        result.rateUntilIdle = Double(arrived) / max(Clock.seconds(from: start, to: idleAt), 1e-9)
        return result
    }
}
