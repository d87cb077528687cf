import Foundation

/// Part 1: the bridge alone between fakes on loopback — sustained messages/s each direction, latency at a fixed
/// offered rate, CPU per message, and the fakes' own ceilings for comparison.
struct BridgeOnlyBenchmark {
    var rooms = 50
    var messages = ProcessInfo.processInfo.environment["ISTHMUS_BENCH_MESSAGES"].flatMap(Int.init) ?? 20_000
    var window = 256
    var singleRoomMessages = 5_000
    var pacedRate = 1_000.0
    var pacedSeconds = 5.0
    let report: Report
    /// The store the bridge runs on (the PostgreSQL run reuses the SQLite run's measurements of the fakes).
    var column: Report.Column = .sqlite
    /// With ``column`` `.postgres`: the cluster to create the bridge's database on.
    var postgres: BenchPostgres?

    private var targetPrefix: String { column == .postgres ? "(PostgreSQL) " : "" }

    static let section = "Bridge only (fakes on loopback)"

    func run() async throws {
        let section = Self.section
        let x2mCeiling: Double, m2xCeiling: Double
        if column == .sqlite {
            progress("bridge-only\(column == .postgres ? " (PostgreSQL)" : ""): measuring the fakes alone")
            let inject = try await FakeCeilings.mucInject(rooms: rooms, copies: 2, total: messages, window: window)
            let reflect = try await FakeCeilings.mucReflect(rooms: rooms, copies: 2, total: messages, window: window)
            let push = try await FakeCeilings.homeserverPush(total: messages, window: window)
            let answer = try await FakeCeilings.homeserverAnswer(total: messages, connections: 16)
            let session = try await FakeCeilings.urlSessionSends(total: messages / 2, concurrency: 16)
            x2mCeiling = min(inject.rate, answer.rate)
            m2xCeiling = min(push.rate, reflect.rate)
            report.add(section, "fake_muc_inject_per_s", "fake MUC → null component (msg/s)", inject.rate, "msg/s")
            report.add(section, "fake_muc_reflect_per_s", "null component → fake MUC, reflected (msg/s)", reflect.rate, "msg/s")
            report.add(section, "fake_hs_push_per_s", "fake HS pushing transactions → null listener", push.rate, "events/s")
            report.add(section, "fake_hs_answer_per_s", "raw HTTP ×16 → fake HS send", answer.rate, "calls/s")
            report.add(section, "client_send_per_s", "MatrixClient ×16 → fake HS send (bridge's client)", session.rate, "calls/s")
        } else {
            // The fakes do not depend on the store: the SQLite run measured them.
            func ceiling(_ a: String, _ b: String) -> Double {
                guard let first = report.value(section, a), let second = report.value(section, b) else { return .nan }
                return min(first, second)
            }
            x2mCeiling = ceiling("fake_muc_inject_per_s", "fake_hs_answer_per_s")
            m2xCeiling = ceiling("fake_hs_push_per_s", "fake_muc_reflect_per_s")
        }

        progress("bridge-only\(column == .postgres ? " (PostgreSQL)" : ""): starting the bridge with \(rooms) rooms")
        let harness = try await FakeHarness(name: "bridge", rooms: rooms, matrixMembers: 1, xmppUsers: 1,
                                            databaseURL: try postgres?.createDatabase("bridge"))
        do {
            _ = try await harness.startBridge(timeout: .seconds(60))
            try await warmUp(harness)
            let pid = harness.bridge.pid

            progress("bridge-only\(column == .postgres ? " (PostgreSQL)" : ""): XMPP → Matrix")
            let x2m = try await Load.windowed(total: messages, window: window, timeout: .seconds(120), measuring: pid) { tracker, seq in
                try harness.sendFromXMPP(tracker, seq)
            }
            let x2mOne = try await Load.windowed(total: singleRoomMessages, window: 64, timeout: .seconds(120), measuring: pid) { tracker, seq in
                try harness.sendFromXMPP(tracker, seq, roomCount: 1)
            }
            let pacedCount = Int(pacedRate * pacedSeconds)
            let x2mPaced = try await Load.paced(total: pacedCount, rate: pacedRate, timeout: .seconds(60), measuring: pid) { tracker, seq in
                try harness.sendFromXMPP(tracker, seq)
            }

            progress("bridge-only\(column == .postgres ? " (PostgreSQL)" : ""): Matrix → XMPP")
            let m2x = try await Load.windowed(total: messages, window: window, timeout: .seconds(120), measuring: pid) { tracker, seq in
                harness.sendFromMatrix(tracker, seq)
            }
            let m2xOne = try await Load.windowed(total: singleRoomMessages, window: 64, timeout: .seconds(120), measuring: pid) { tracker, seq in
                harness.sendFromMatrix(tracker, seq, roomCount: 1)
            }
            let m2xPaced = try await Load.paced(total: pacedCount, rate: pacedRate, timeout: .seconds(60), measuring: pid) { tracker, seq in
                harness.sendFromMatrix(tracker, seq)
            }
            let stats = harness.bridge.stats()

            // The per-message breakdown, in runs of their own: counting system calls (perf) slows the process a little,
            // and the figures above must not pay for it.
            progress("bridge-only\(column == .postgres ? " (PostgreSQL)" : ""): per-message breakdown")
            let probe = harness.costProbe
            let breakdownMessages = min(messages, 10_000)
            let (x2mProbed, x2mCosts) = try await probe.measure {
                try await Load.windowed(total: breakdownMessages, window: window, timeout: .seconds(120), measuring: pid) { tracker, seq in
                    try harness.sendFromXMPP(tracker, seq)
                }
            }
            let (m2xProbed, m2xCosts) = try await probe.measure {
                try await Load.windowed(total: breakdownMessages, window: window, timeout: .seconds(120), measuring: pid) { tracker, seq in
                    harness.sendFromMatrix(tracker, seq)
                }
            }

            for (name, key, max, one, paced, ceiling, (probed, costs)) in [
                ("XMPP → Matrix", "x2m", x2m, x2mOne, x2mPaced, x2mCeiling, (x2mProbed, x2mCosts)),
                ("Matrix → XMPP", "m2x", m2x, m2xOne, m2xPaced, m2xCeiling, (m2xProbed, m2xCosts)),
            ] {
                report.add(section, "\(key)_rate", "\(name): sustained, \(rooms) rooms", max.rateUntilIdle, "msg/s", column: column)
                report.add(section, "\(key)_ratio_to_fakes", "\(name): ratio to the fakes' ceiling", max.rateUntilIdle / ceiling, "×", column: column)
                report.add(section, "\(key)_rate_one_room", "\(name): sustained, 1 room", one.rateUntilIdle, "msg/s", column: column)
                report.add(section, "\(key)_p50_at_max_ms", "\(name): p50 latency at max rate", max.latency.p50, "ms", column: column)
                report.add(section, "\(key)_paced_offered", "\(name): offered rate (fixed)", paced.offered, "msg/s", column: column)
                report.add(section, "\(key)_p50_ms", "\(name): p50 latency at \(Int(pacedRate)) msg/s", paced.latency.p50, "ms", column: column)
                report.add(section, "\(key)_p99_ms", "\(name): p99 latency at \(Int(pacedRate)) msg/s", paced.latency.p99, "ms", column: column)
                report.add(section, "\(key)_max_ms", "\(name): max latency at \(Int(pacedRate)) msg/s", paced.latency.max, "ms", column: column)
                report.add(section, "\(key)_cpu_us", "\(name): bridge CPU per message", max.cpuMicrosPerMessage, "µs", column: column)
                for row in costs.per(probed.arrived).rows {
                    report.add(section, "\(key)_per_msg_\(row.key)", "\(name): \(row.label) per message", row.value, "", column: column)
                }
                report.target(targetPrefix + "bridge-only \(name) ≥ 5,000 msg/s", met: max.rateUntilIdle >= 5_000,
                              "\(Int(max.rateUntilIdle)) msg/s over \(rooms) rooms (fakes' ceiling \(Int(ceiling)))")
                report.target(targetPrefix + "bridge-only \(name) p99 < 5 ms at \(Int(pacedRate)) msg/s", met: paced.latency.p99 < 5,
                              "p99 \(Report.format(paced.latency.p99)) ms, max \(Report.format(paced.latency.max)) ms")
                if max.arrived < max.total || paced.arrived < paced.total {
                    report.note(targetPrefix + "\(name): \(max.total - max.arrived + paced.total - paced.arrived) messages did not arrive in time")
                }
            }
            if m2x.rateUntilIdle < 5_000 {
                report.note(targetPrefix + "Matrix → XMPP is bounded by its durable work: each message still takes more than one store "
                            + "commit (its map entry with the inbox row it consumes; the receipt, gathered with others), each a "
                            + "round trip and an fsync on PostgreSQL — see the per-message breakdown and docs/performance.md")
            }
            if let stats {
                report.add(section, "bridge_rss_mib", "bridge resident memory after the runs", stats.residentMiB, "MiB", column: column)
            }
        } catch {
            await harness.shutdown()
            throw error
        }
        await harness.shutdown()
    }

    /// One message each way in every room, so ghosts and puppets are in place before anything is timed.
    private func warmUp(_ harness: FakeHarness) async throws {
        for direction in 0..<2 {
            let result = try await Load.windowed(total: harness.rooms, window: harness.rooms, timeout: .seconds(30)) { tracker, seq in
                if direction == 0 { try harness.sendFromXMPP(tracker, seq) } else { harness.sendFromMatrix(tracker, seq) }
            }
            guard result.arrived == result.total else {
                throw BenchmarkFailure("warm-up: only \(result.arrived) of \(result.total) messages were bridged (log: \(harness.bridge.logPath))")
            }
        }
    }
}
