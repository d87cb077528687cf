import Foundation
import IsthmusFakes
#if canImport(Glibc)
import Glibc
#endif

/// What the bridge process spent on a measured run besides CPU time (issue 26's per-message breakdown): context
/// switches of all its threads (`/proc/PID/task/*/status`), system calls and heap allocations (``PerfCounter``, when
/// perf is installed and allowed; NaN otherwise), and the store's calls, wake-ups, statements and commits (the
/// bridge's own `isthmus_store_*_total` metrics, scraped before and after).
struct CostProbe {
    let pid: Int32
    /// The bridge's `metrics.listen` port.
    let metricsPort: Int

    /// Totals over one run; divide by the messages bridged for the breakdown.
    struct Costs {
        var voluntarySwitches = 0.0
        var involuntarySwitches = 0.0
        var syscalls = Double.nan
        /// Calls of libc's `malloc`, `calloc` and `realloc` (Swift's objects, arrays and strings all come from them).
        var allocations = Double.nan
        var storeCalls = 0.0
        var storeWakeups = 0.0
        var statements = 0.0
        var commits = 0.0
        /// PostgreSQL round trips (0 on SQLite, which has no server).
        var roundTrips = 0.0

        /// Each figure divided by `messages`.
        func per(_ messages: Int) -> Costs {
            let n = Double(max(messages, 1))
            return Costs(voluntarySwitches: voluntarySwitches / n, involuntarySwitches: involuntarySwitches / n,
                         syscalls: syscalls / n, allocations: allocations / n, storeCalls: storeCalls / n, storeWakeups: storeWakeups / n,
                         statements: statements / n, commits: commits / n, roundTrips: roundTrips / n)
        }

        /// The rows a report shows, key suffix → label.
        var rows: [(key: String, label: String, value: Double)] {
            [("switches_voluntary", "context switches, voluntary (a thread waited)", voluntarySwitches),
             ("switches_involuntary", "context switches, involuntary (preempted)", involuntarySwitches),
             ("syscalls", "system calls", syscalls),
             ("allocations", "heap allocations (malloc, calloc, realloc)", allocations),
             ("store_calls", "store calls (hops to the store's thread)", storeCalls),
             ("store_wakeups", "store thread wake-ups", storeWakeups),
             ("store_statements", "store SQL statements", statements),
             ("store_commits", "store commits", commits),
             ("store_round_trips", "store round trips (PostgreSQL)", roundTrips)]
        }
    }

    /// Runs `body` (a load run that returns once the bridge is idle again) and returns its result with what the bridge
    /// spent meanwhile.
    func measure<R>(_ body: () async throws -> R) async throws -> (R, Costs) {
        let switchesBefore = Self.contextSwitches(pid: pid)
        let storeBefore = try await storeCounters()
        let perf = await PerfCounter.start(pid: pid)
        let result = try await body()
        let counted = await perf?.stop()
        let storeAfter = try await storeCounters()
        let switchesAfter = Self.contextSwitches(pid: pid)
        func store(_ name: String) -> Double { (storeAfter[name] ?? .nan) - (storeBefore[name] ?? .nan) }
        return (result, Costs(voluntarySwitches: Double(switchesAfter.voluntary - switchesBefore.voluntary),
                              involuntarySwitches: Double(switchesAfter.involuntary - switchesBefore.involuntary),
                              syscalls: counted?[PerfCounter.syscalls] ?? .nan,
                              allocations: PerfCounter.allocators.reduce(0.0) { $0 + (counted?[$1] ?? .nan) },
                              storeCalls: store("isthmus_store_calls_total"), storeWakeups: store("isthmus_store_thread_wakeups_total"),
                              statements: store("isthmus_store_statements_total"), commits: store("isthmus_store_commits_total"),
                              roundTrips: store("isthmus_store_round_trips_total")))
    }

    /// The `isthmus_store_*` samples of one scrape.
    private func storeCounters() async throws -> [String: Double] {
        let response = try await RawHTTP.request("GET", port: metricsPort, "/metrics")
        guard response.status == 200 else { throw BenchmarkFailure("metrics scrape: status \(response.status)") }
        var values: [String: Double] = [:]
        for line in response.text.split(separator: "\n") where line.hasPrefix("isthmus_store_") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }

    /// Voluntary and involuntary context switches summed over the threads alive now (a thread that ended takes its
    /// counts with it; the bridge's threads live as long as it does).
    static func contextSwitches(pid: Int32) -> (voluntary: Int, involuntary: Int) {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var total = (voluntary: 0, involuntary: 0)
        for task in tasks {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
            for line in status.split(separator: "\n") {
                if line.hasPrefix("voluntary_ctxt_switches:") { total.voluntary += Int(line.split(separator: "\t").last ?? "") ?? 0 }
                if line.hasPrefix("nonvoluntary_ctxt_switches:") { total.involuntary += Int(line.split(separator: "\t").last ?? "") ?? 0 }
            }
        }
        return total
    }
}

/// `perf stat -p PID` running beside a measured run: the system calls (`raw_syscalls:sys_enter`) and the calls of libc's
/// allocator (uprobes `probe_libc:malloc`, `calloc`, `realloc`, added once with `perf probe`; they need root) of all
/// the process's threads. Nil when perf cannot be started; an event perf could not count is missing from the result.
/// A uprobe costs a trap per call: the breakdown runs are separate from the timed ones for that reason.
///
/// perf prints a count every 100 ms (`-I 100`) on its standard error — unbuffered, into a file here (a pipe read only
/// at the end would fill and stall perf on a long run) — summed at the end. It is stopped with SIGKILL: the benchmark
/// ignores SIGINT and SIGTERM (``BridgeUnderTest/stopAllOnSignal()``), children inherit that, and perf would never
/// stop on them. The run ends with the bridge idle, so the last interval's edge loses nothing that matters.
final class PerfCounter {
    static let syscalls = "raw_syscalls:sys_enter"
    static let allocators = ["probe_libc:malloc", "probe_libc:calloc", "probe_libc:realloc"]

    private let process = Process()
    private let output: URL

    private init?(pid: Int32, events: [String]) {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/perf") else { return nil }
        output = FileManager.default.temporaryDirectory.appendingPathComponent("isthmus-bench-perf-\(UUID().uuidString).txt")
        guard FileManager.default.createFile(atPath: output.path, contents: nil),
              let file = try? FileHandle(forWritingTo: output) else { return nil }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/perf")
        process.arguments = ["stat", "-x", ",", "-I", "100"] + events.flatMap { ["-e", $0] } + ["-p", "\(pid)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = file
        do { try process.run() } catch { return nil }
    }

    /// Starts perf on `pid` and gives it the moment it takes to attach to every thread before the run begins (the
    /// count only grows by what the idle bridge does meanwhile).
    static func start(pid: Int32) async -> PerfCounter? {
        let events = [syscalls] + (allocatorProbes(pid: pid) ? allocators : [])
        guard let counter = PerfCounter(pid: pid, events: events) else { return nil }
        try? await Task.sleep(for: .milliseconds(300))
        return counter
    }

    /// Whether the allocator's uprobes exist (adding them on the libc `pid` maps, when they do not yet).
    private static func allocatorProbes(pid: Int32) -> Bool {
        if perf(["probe", "-l"]).contains("probe_libc:realloc") { return true }
        let maps = (try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)) ?? ""
        guard let libc = maps.split(separator: "\n").lazy.compactMap({ line -> String? in
            guard let path = line.split(separator: " ", omittingEmptySubsequences: true).last, path.contains("/libc.so") else { return nil }
            return String(path)
        }).first else { return false }
        _ = perf(["probe", "-x", libc, "--add", "malloc", "--add", "calloc", "--add", "realloc"])
        return perf(["probe", "-l"]).contains("probe_libc:realloc")
    }

    /// What `perf ARGUMENTS` printed (both streams); empty when it could not run.
    private static func perf(_ arguments: [String]) -> String {
        let process = Process()
        let pipe = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/perf")
        process.arguments = arguments
        process.standardOutput = pipe
        process.standardError = pipe
        guard (try? process.run()) != nil else { return "" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Stops perf and returns each event's sum over its intervals (an event it printed no count for is missing: not
    /// allowed, or no such tracepoint).
    func stop() async -> [String: Double] {
        try? await Task.sleep(for: .milliseconds(150))   // the interval in progress is printed
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        defer { try? FileManager.default.removeItem(at: output) }
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        var totals: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            // `-I` with `-x ,`: time, count, unit, event, …
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count > 3, let count = Double(fields[1]) else { continue }
            totals[fields[3], default: 0] += count
        }
        return totals
    }
}
