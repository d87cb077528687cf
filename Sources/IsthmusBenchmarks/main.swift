import Foundation
import IsthmusCommon

/// `isthmus-bench <suite>`: prints benchmark figures. Suites: xml, appservice (more arrive with the bridge).
let arguments = Array(CommandLine.arguments.dropFirst())
let suites: [String: @Sendable ([String]) async throws -> Void] = [
    "xml": XMLBenchmarks.run,
    "appservice": MatrixBenchmarks.run,
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
