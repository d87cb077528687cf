import Foundation
import IsthmusCommon
import IsthmusStore

/// `isthmus-bench store [--calls N] [--synchronous normal|full] [--postgres URL] [--fenced]`: the store's own path, without HTTP —
/// calls/s, CPU per call and the latency of one awaited call (the hop to the store's executor and back), one caller at a
/// time and from 50 rooms' tasks at once, on an on-disk WAL database as `serve` uses (or, with `--postgres`, on that
/// PostgreSQL database, which must be empty or an earlier run's). `--fenced`: the store holds the bridge lease and checks it
/// in every write transaction, as the active process of an active/standby pair does. Prints figures; asserts nothing.
enum StoreBenchmarks {
    static func run(_ arguments: [String]) async throws {
        let calls = arguments.firstIndex(of: "--calls").flatMap { Int(arguments[$0 + 1]) } ?? 20_000
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("isthmus-bench-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let synchronous = arguments.firstIndex(of: "--synchronous").flatMap { StoreSynchronous(rawValue: arguments[$0 + 1]) }
            ?? .normal
        let postgres = arguments.firstIndex(of: "--postgres").flatMap { PostgresURL(arguments[$0 + 1]) }
        let location = postgres.map { DatabaseLocation.postgres(url: $0) } ?? .sqlite(path: path)
        let fenced = arguments.contains("--fenced")
        print("store: \(location.backendName), synchronous = \(synchronous.rawValue)\(fenced ? ", fenced by the bridge lease" : "")")
        let store = try Store(location: location, synchronous: synchronous, logger: .disabled)
        var grant: LeaseGrant?
        if fenced {
            let owner = LeaseOwner("bench-\(UUID().uuidString.prefix(8))")!
            grant = try await store.tryAcquireLease(owner: owner, ttl: .seconds(3600))
            guard let grant else { throw BenchmarkFailure("the bridge lease is held by another owner") }
            await store.fence(with: grant)
        }
        let transaction = TransactionID("bench-\(UUID().uuidString)")!
        try await store.markTransactionProcessed(transaction)

        try await measure("read (isTransactionProcessed), 1 caller", calls: calls, tasks: 1) { _, _ in
            _ = try await store.isTransactionProcessed(transaction)
        }
        try await measure("write (enqueueInbox, 1 event), 1 caller", calls: calls / 4, tasks: 1) { task, index in
            _ = try await store.enqueueInbox([event(task, index)])
        }
        try await measure("room cycle (enqueue, read, delete), 50 rooms at once", calls: calls / 4, tasks: 50) { task, index in
            let added = try await store.enqueueInbox([event(task, index)])
            _ = try await store.inbox(added[0].room)
            try await store.deleteInbox(seq: added[0].seq)
        }
        if let grant { try await store.releaseLease(grant) }
        fflush(nil)
    }

    private static let payload = Array(#"{"msgtype":"m.text","body":"Benchmark message with some text to make it realistic"}"#.utf8)

    private static func event(_ task: Int, _ index: Int) -> (room: RoomID, eventID: EventID, payload: [UInt8]) {
        (RoomID("!room\(task):localhost")!, EventID("$e\(task)_\(index)_\(UInt32.random(in: 0...UInt32.max))")!, payload)
    }

    /// Runs `calls` calls of `body` spread over `tasks` concurrent tasks; prints calls/s, CPU µs per call and latency.
    private static func measure(_ name: String, calls: Int, tasks: Int,
                                _ body: @escaping @Sendable (Int, Int) async throws -> Void) async throws {
        let cpuBefore = ProcessStats.read(pid: getpid())?.cpuSeconds ?? .nan
        let start = Clock.nanos()
        let latencies = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var sample: [Int64] = []
                    for index in stride(from: task, to: calls, by: tasks) {
                        let callStart = Clock.nanos()
                        try await body(task, index)
                        sample.append(Clock.nanos() - callStart)
                    }
                    return sample
                }
            }
            return try await group.reduce(into: [Int64]()) { $0 += $1 }
        }
        let elapsed = Clock.seconds(from: start, to: Clock.nanos())
        let cpu = (ProcessStats.read(pid: getpid())?.cpuSeconds ?? .nan) - cpuBefore
        let summary = LatencySummary(nanos: latencies)
        print("store \(name): \(calls) calls, \(Int(Double(calls) / elapsed)) calls/s, "
              + String(format: "CPU %.1f µs/call, latency p50 %.3f ms, p99 %.3f ms", cpu / Double(calls) * 1e6, summary.p50, summary.p99))
    }
}
