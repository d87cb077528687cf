import Foundation
import IsthmusCommon
import IsthmusFakes
import Matrix
import MatrixClient

/// Part `client`: the Matrix client alone against the fake homeserver on loopback — `sendMessage` calls per second
/// one at a time and with 16 in flight, CPU per call, and resident memory and threads after all calls.
///
/// The client runs in a worker process of its own (`isthmus-bench client-worker`), so its CPU time and memory are its
/// own: the fake homeserver stays in this process. Two rounds (with several clients, taking turns); each figure is the
/// better of the two. `ISTHMUS_BENCH_CLIENT_CALLS` sets the calls per client (default 100,000; the first
/// 10,000 sequential, the rest 16 in flight).
struct MatrixClientBenchmark {
    let report: Report

    static let section = "Matrix client alone (fake homeserver on loopback)"

    /// The clients measured. The former hand-written HTTP/1.1 client ran beside libcurl here until it was deleted;
    /// docs/performance.md keeps that side-by-side table.
    static let transports = [("libcurl", "libcurl (multi interface)")]

    func run() async throws {
        let total = Int(ProcessInfo.processInfo.environment["ISTHMUS_BENCH_CLIENT_CALLS"] ?? "") ?? 100_000
        let fake = try AnsweringHomeserver.tracking()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await fake.run() }
            defer { fake.stop() }
            // Two rounds, the clients taking turns, keeping each figure's better value: on a shared 2-core machine one
            // run can catch a busy spell of other work, and every cross-thread wake-up then waits for a core.
            var best: [String: [String: Double]] = [:]
            for round in 1...Self.rounds {
                for (key, name) in Self.transports {
                    progress("client: \(name), \(total) calls (round \(round) of \(Self.rounds))")
                    let figures = try await Self.worker(["--url", "http://127.0.0.1:\(fake.port)", "--transport", key, "--calls", String(total)])
                    for (figure, value) in figures { best[key, default: [:]][figure] = Self.better(figure, best[key]?[figure], value) }
                }
            }
            let section = Self.section
            for (key, name) in Self.transports {
                let figures = best[key] ?? [:]
                report.add(section, "\(key)_sequential_per_s", "\(name): calls/s, one at a time", figures["sequential_per_s"] ?? .nan, "calls/s")
                report.add(section, "\(key)_sequential_cpu_us", "\(name): CPU per call, one at a time", figures["sequential_cpu_us"] ?? .nan, "µs")
                report.add(section, "\(key)_concurrent_per_s", "\(name): calls/s, 16 in flight", figures["concurrent_per_s"] ?? .nan, "calls/s")
                report.add(section, "\(key)_concurrent_cpu_us", "\(name): CPU per call, 16 in flight", figures["concurrent_cpu_us"] ?? .nan, "µs")
                report.add(section, "\(key)_rss_mib", "\(name): resident after \(total) calls", figures["rss_mib"] ?? .nan, "MiB")
                report.add(section, "\(key)_threads", "\(name): threads after \(total) calls", figures["threads"] ?? .nan, "threads")
            }
        }
    }

    static let rounds = 2

    /// The better of two values of `figure`: the higher rate, the lower CPU, memory and thread count.
    private static func better(_ figure: String, _ old: Double?, _ new: Double) -> Double {
        guard let old, !old.isNaN else { return new }
        return figure.hasSuffix("_per_s") ? max(old, new) : min(old, new)
    }

    /// Runs `isthmus-bench client-worker ARGUMENTS` and returns the `key=value` figures it prints.
    private static func worker(_ arguments: [String]) async throws -> [String: Double] {
        let output: String = try await withCheckedThrowingContinuation { continuation in
            Thread {   // a blocking read: not on the cooperative pool the fake homeserver runs on
                let process = Process()
                let pipe = Pipe()
                process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
                process.arguments = ["client-worker"] + arguments
                process.standardOutput = pipe
                do {
                    try process.run()
                    let data = pipe.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()   // also frees the Process on Linux (docs/reliability.md, "AddressSanitizer")
                    continuation.resume(returning: String(decoding: data, as: UTF8.self))
                } catch {
                    continuation.resume(throwing: error)
                }
            }.start()
        }
        var figures: [String: Double] = [:]
        for pair in output.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = Double(parts[1]) { figures[String(parts[0])] = value }
        }
        guard figures["rss_mib"] != nil else { throw BenchmarkFailure("the client worker printed no figures: \(output)") }
        return figures
    }

    /// `isthmus-bench client-worker --url URL --transport libcurl --calls N`: the worker's side. Prints one line
    /// of `key=value` figures on stdout.
    static func workerMain(_ arguments: [String]) async throws {
        func value(_ name: String) -> String? {
            arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        }
        guard let url = value("--url").flatMap(URL.init(string:)), let transport = value("--transport"),
              let total = value("--calls").flatMap(Int.init) else {
            throw BenchmarkFailure("usage: client-worker --url URL --transport libcurl --calls N")
        }
        let configuration = MatrixClient.Configuration(homeserverURL: url, accessToken: "bench")
        let client = MatrixClient(configuration: configuration, logger: .disabled)
        let room = RoomID("!benchroom:localhost")!, ghost = UserID("@_xmpp_bench:localhost")!
        @Sendable func call(_ index: Int) async throws {
            _ = try await client.sendMessage(.text("message \(index)"), to: room,
                                             transactionID: .derived(fromSourceKey: "\(transport) \(index)"), as: ghost)
        }
        for index in 0..<500 { try await call(-1 - index) }   // warm-up: connections, caches

        let sequential = min(10_000, total)
        let (sequentialRate, sequentialCPU) = try await measure(calls: sequential) {
            for index in 0..<sequential { try await call(index) }
        }
        let concurrent = total - sequential
        let (concurrentRate, concurrentCPU) = try await measure(calls: concurrent) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<16 {
                    group.addTask {
                        for index in stride(from: sequential + worker, to: total, by: 16) { try await call(index) }
                    }
                }
                try await group.waitForAll()
            }
        }
        let stats = ProcessStats.current()
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let threads = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }.flatMap { $0.split(separator: "\t").last } ?? "0"
        print("sequential_per_s=\(sequentialRate) sequential_cpu_us=\(sequentialCPU) concurrent_per_s=\(concurrentRate) "
              + "concurrent_cpu_us=\(concurrentCPU) rss_mib=\(stats?.residentMiB ?? .nan) threads=\(threads)")
        fflush(nil)
    }

    /// Runs `body` (`calls` calls): calls per second and CPU microseconds per call of this process.
    private static func measure(calls: Int, _ body: () async throws -> Void) async throws -> (Double, Double) {
        let cpuBefore = ProcessStats.current()?.cpuSeconds ?? .nan
        let start = ContinuousClock.now
        try await body()
        let elapsed = ContinuousClock.now - start
        let cpu = (ProcessStats.current()?.cpuSeconds ?? .nan) - cpuBefore
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (Double(calls) / seconds, cpu / Double(max(calls, 1)) * 1e6)
    }
}
