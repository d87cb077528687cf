import Foundation
import IsthmusCommon

/// `isthmus-bench <suite>`: prints benchmark figures. `run` is what `scripts/bench` runs (all parts, or `--only`);
/// `xml`, `appservice` and `store` measure single components.
OpenSSLLifetime.keepUntilProcessExit()
let arguments = Array(CommandLine.arguments.dropFirst())
let suites: [String: @Sendable ([String]) async throws -> Void] = [
    "run": BenchRun.run,
    "xml": XMLBenchmarks.run,
    "appservice": MatrixBenchmarks.run,
    "store": StoreBenchmarks.run,
    "client-worker": MatrixClientBenchmark.workerMain,
]
guard let name = arguments.first, let suite = suites[name] else {
    StandardStreams.writeError("usage: isthmus-bench <\(suites.keys.sorted().joined(separator: "|"))> [options]\n")
    exit(64)
}
do {
    try await suite(Array(arguments.dropFirst()))
} catch {
    StandardStreams.writeError("isthmus-bench: \(error)\n")
    exit(1)
}
