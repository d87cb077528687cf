import Foundation

/// Part 2: 1,000 linked rooms with 10 puppets and 10 ghosts each — start-up until every link is active and every
/// puppet and ghost is in place (first start, and a restart with everything in the store), resident memory (peak and
/// steady), and memory after 100,000 bridged messages compared with before.
struct ScaleBenchmark {
    var rooms = 1_000
    var members = 10
    var messages = ProcessInfo.processInfo.environment["ISTHMUS_BENCH_SCALE_MESSAGES"].flatMap(Int.init) ?? 100_000
    var window = 512
    let report: Report
    /// The store the bridge runs on.
    var column: Report.Column = .sqlite
    /// With ``column`` `.postgres`: the cluster to create the bridge's database on.
    var postgres: BenchPostgres?

    private var targetPrefix: String { column == .postgres ? "(PostgreSQL) " : "" }

    /// Which way message `seq` goes: alternately (`ISTHMUS_BENCH_DIRECTION=x2m|m2x` for one way only, to find leaks).
    static func direction(_ seq: Int) -> Int {
        switch ProcessInfo.processInfo.environment["ISTHMUS_BENCH_DIRECTION"] {
        case "x2m": 0
        case "m2x": 1
        default: seq % 2
        }
    }

    /// How long the bridge is left idle before its steady memory is read (it returns freed heap memory every 5 s).
    static let settle = Duration.seconds(6)

    static let section = "Scale (1,000 rooms × 10 puppets + 10 ghosts)"

    func run() async throws {
        let section = Self.section
        progress("scale\(column == .postgres ? " (PostgreSQL)" : ""): \(rooms) rooms, first start")
        let harness = try await FakeHarness(name: "scale", rooms: rooms, matrixMembers: members, xmppUsers: members,
                                            databaseURL: try postgres?.createDatabase("scale"))
        do {
            let cold = try await harness.startBridge(timeout: .seconds(300))
            let coldPeak = harness.bridge.stats()?.peakResidentMiB ?? .nan
            try await Task.sleep(for: Self.settle)
            guard let steady = harness.bridge.stats() else { throw BenchmarkFailure("the bridge exited (log: \(harness.bridge.logPath))") }
            report.add(section, "first_start_active_s", "first start: all links active", cold.active, "s", column: column)
            report.add(section, "first_start_ready_s", "first start: all puppets and ghosts in place", cold.populated, "s", column: column)
            report.add(section, "rss_peak_first_start_mib", "resident memory, peak during first start", coldPeak, "MiB", column: column)
            report.add(section, "rss_steady_mib", "resident memory, steady (idle after start)", steady.residentMiB, "MiB", column: column)

            progress("scale\(column == .postgres ? " (PostgreSQL)" : ""): \(messages) messages across \(rooms) rooms, both directions")
            let pid = harness.bridge.pid
            var rss: [Double] = [steady.residentMiB]
            var cpu = 0.0, bridged = 0, elapsed = 0.0
            let batches = max(2, messages / 50_000)
            for half in 0..<batches {
                let result = try await Load.windowed(total: messages / batches, window: window, timeout: .seconds(300), measuring: pid) { tracker, seq in
                    if Self.direction(seq) == 0 { try harness.sendFromXMPP(tracker, seq) } else { harness.sendFromMatrix(tracker, seq) }
                }
                cpu += result.cpuSeconds ?? .nan
                bridged += result.arrived
                elapsed += Double(result.arrived) / result.rate
                if result.arrived < result.total { report.note(targetPrefix + "scale: \(result.total - result.arrived) messages of batch \(half + 1) did not arrive") }
                try await Task.sleep(for: Self.settle)
                rss.append(harness.bridge.stats()?.residentMiB ?? .nan)
                progress("scale\(column == .postgres ? " (PostgreSQL)" : ""): resident memory after \((half + 1) * messages / batches) messages: \(Report.format(rss.last!)) MiB")
            }
            report.add(section, "messages_bridged", "messages bridged (half each way)", Double(bridged), "msgs", column: column)
            report.add(section, "messages_rate", "rate across 1,000 rooms (both ways at once)", Double(bridged) / elapsed, "msg/s", column: column)
            let last = rss.count - 1
            report.add(section, "rss_after_50k_mib", "resident memory after 50k messages", rss[1], "MiB", column: column)
            report.add(section, "rss_after_100k_mib", "resident memory after \(messages / 1000)k messages", rss[last], "MiB", column: column)
            report.add(section, "rss_growth_100k_mib", "growth: after \(messages / 1000)k − before", rss[last] - rss[0], "MiB", column: column)
            report.add(section, "rss_growth_second_50k_mib", "growth: after \(messages / 1000)k − after 50k", rss[last] - rss[1], "MiB", column: column)
            report.add(section, "cpu_us_per_message", "bridge CPU per message (1,000 rooms)", cpu / Double(max(bridged, 1)) * 1e6, "µs", column: column)

            progress("scale\(column == .postgres ? " (PostgreSQL)" : ""): restart with everything in the store")
            await harness.bridge.stop()
            // A stopped bridge leaves its links marked active: mark them pending, so the restart is seen activating them.
            for link in try await harness.bridge.store.roomLinks() {
                try await harness.bridge.store.updateRoomLinkStatus(link.matrixRoom, status: .pending, detail: nil)
            }
            let warm = try await harness.startBridge(timeout: .seconds(300), newGhosts: 0)
            try await Task.sleep(for: Self.settle)
            let restarted = harness.bridge.stats()
            report.add(section, "restart_active_s", "restart: all links active", warm.active, "s", column: column)
            report.add(section, "restart_ready_s", "restart: all puppets rejoined", warm.populated, "s", column: column)
            report.add(section, "rss_peak_restart_mib", "resident memory, peak during restart", restarted?.peakResidentMiB ?? .nan, "MiB", column: column)
            report.add(section, "rss_steady_restart_mib", "resident memory, steady after restart", restarted?.residentMiB ?? .nan, "MiB", column: column)

            report.target(targetPrefix + "1,000 rooms ready < 10 s", met: cold.active < 10 && warm.active < 10,
                          "links active after \(Report.format(cold.active)) s (first start), \(Report.format(warm.active)) s (restart); "
                          + "all ghosts and puppets in place after \(Report.format(cold.populated)) s / \(Report.format(warm.populated)) s")
            report.target(targetPrefix + "steady memory < 100 MB", met: steady.residentMiB * 1.048576 < 100,
                          "\(Report.format(steady.residentMiB)) MiB steady, \(Report.format(coldPeak)) MiB peak")
            report.target(targetPrefix + "no growth after 100k messages", met: rss[last] - rss[1] < 2,
                          "\(rss.map(Report.format).joined(separator: " → ")) MiB (before, then every \(messages / batches / 1000)k)")
        } catch {
            await harness.shutdown()
            throw error
        }
        await harness.shutdown()
    }
}
