import Foundation
import IsthmusCommon
#if canImport(Glibc)
import Glibc
#endif

/// `isthmus-bench run [--only bridge,scale,fanin,real,client,media] [--json] [--testbed DIR] [--postgres URL]`: the
/// benchmarks of `scripts/bench`. Prints one table (or, with `--json`, one JSON object) on stdout; progress goes to
/// stderr. With `--postgres` (a superuser URL on a PostgreSQL cluster), the bridge-only and scale parts run a second
/// time with the bridge's store on a new database there: a second column (`bridge_postgres`, `scale_postgres` in JSON).
///
/// The bridge under test is the release `isthmus` binary beside this one (or `$ISTHMUS_BIN`), run as its own process.
/// For investigating: `ISTHMUS_BENCH_MESSAGES` (bridge-only run length), `ISTHMUS_BENCH_SCALE_MESSAGES` and
/// `ISTHMUS_BENCH_DIRECTION=x2m|m2x` (scale part), `ISTHMUS_BENCH_WRAPPER="heaptrack"` (runs the bridge under a
/// profiler), `ISTHMUS_BENCH_KEEP=1` (keeps the bridge's config, store and log).
enum BenchRun {
    static let parts = ["bridge", "scale", "fanin", "real", "client", "media"]

    static func run(_ arguments: [String]) async throws {
        var only = Set(parts)
        var json = false
        var testbed = ProcessInfo.processInfo.environment["ISTHMUS_TESTBED_DIR"]
        var postgres: BenchPostgres?
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--only":
                guard index + 1 < arguments.count else { throw BenchmarkFailure("--only needs a value") }
                only = Set(arguments[index + 1].split(separator: ",").map(String.init))
                guard only.isSubset(of: parts) else { throw BenchmarkFailure("--only takes \(parts.joined(separator: "|"))") }
                index += 1
            case "--json":
                json = true
            case "--postgres":
                guard index + 1 < arguments.count else { throw BenchmarkFailure("--postgres needs a postgresql:// URL") }
                postgres = BenchPostgres(adminURL: arguments[index + 1])
                index += 1
            case "--testbed":
                guard index + 1 < arguments.count else { throw BenchmarkFailure("--testbed needs a directory") }
                testbed = arguments[index + 1]
                index += 1
            default:
                throw BenchmarkFailure("unknown option \(arguments[index])")
            }
            index += 1
        }
        signal(SIGPIPE, SIG_IGN)
        BridgeUnderTest.stopAllOnSignal()
        guard only == ["client"] || FileManager.default.isExecutableFile(atPath: BridgeUnderTest.isthmusBinary) else {
            throw BenchmarkFailure("no isthmus binary at \(BridgeUnderTest.isthmusBinary) (build it, or set ISTHMUS_BIN)")
        }
        let machine: [String: String] = [
            "cpu": MachineInfo.cpuModel, "cores": String(MachineInfo.cores),
            "memory_gib": String(format: "%.1f", MachineInfo.memoryGiB), "load_before": String(format: "%.2f", MachineInfo.loadAverage),
            "os": ProcessInfo.processInfo.operatingSystemVersionString,
        ]
        let report = Report()
        if let postgres, !only.isDisjoint(with: ["bridge", "scale"]) {
            try postgres.restoreDefaultDurability()
            report.note(BenchPostgres.note)
        }
        let started = Clock.nanos()
        if only.contains("bridge") {
            try await BridgeOnlyBenchmark(report: report).run()
            if let postgres { try await BridgeOnlyBenchmark(report: report, column: .postgres, postgres: postgres).run() }
        }
        if only.contains("scale") {
            try await ScaleBenchmark(report: report).run()
            if let postgres { try await ScaleBenchmark(report: report, column: .postgres, postgres: postgres).run() }
        }
        if only.contains("fanin") { try await FanInBenchmark(report: report).run() }
        if only.contains("client") { try await MatrixClientBenchmark(report: report).run() }
        if only.contains("real") {
            guard let testbed else { throw BenchmarkFailure("the real-server part needs --testbed DIR (scripts/bench starts one)") }
            try await RealServerBenchmark(report: report, testbed: testbed).run()
        }
        if only.contains("media") {
            guard let testbed else { throw BenchmarkFailure("the media part needs --testbed DIR (scripts/bench starts one)") }
            try await MediaBenchmark(report: report, testbed: testbed).run()
        }
        var machineAfter = machine
        machineAfter["load_after"] = String(format: "%.2f", MachineInfo.loadAverage)
        machineAfter["duration_s"] = String(Int(Clock.seconds(from: started, to: Clock.nanos())))
        StandardStreams.writeOutput(json ? report.json(machine: machineAfter) : report.table(machine: machineAfter))
    }
}
