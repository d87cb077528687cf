import Foundation
import XCTest

/// Prints the bridge's logs when an end-to-end test fails, so that a CI run's output says what the bridge saw
/// (the scenario folder with the full logs stays in the kept test bed).
final class BridgeLogReporter: NSObject, XCTestObservation, @unchecked Sendable {
    static let shared: BridgeLogReporter = {
        let reporter = BridgeLogReporter()
        XCTestObservationCenter.shared.addTestObserver(reporter)
        return reporter
    }()

    /// Lines printed per log: the last ones at info level and above.
    static let linesPerLog = 60

    private let lock = NSLock()
    private var scenarios: [URL] = []

    /// Reports `directory`'s `serve-*.log` files if the running test fails.
    func watch(_ directory: URL) {
        lock.withLock { scenarios.append(directory) }
    }

    func testCaseWillStart(_ testCase: XCTestCase) {
        lock.withLock { scenarios.removeAll() }
    }

    func testCase(_ testCase: XCTestCase, didFailWithDescription description: String, inFile filePath: String?, atLine lineNumber: Int) {
        // Once per test: later failures of the same test would repeat the same logs.
        let directories = lock.withLock { () -> [URL] in
            defer { scenarios.removeAll() }
            return scenarios
        }
        for directory in directories {
            let logs = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
                .filter { $0.hasPrefix("serve-") && $0.hasSuffix(".log") }.sorted()
            for name in logs {
                let path = directory.appendingPathComponent(name).path
                let lines = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n")
                    .filter { !$0.contains(" debug ") }.suffix(Self.linesPerLog)
                print("---- \(path): last \(lines.count) lines at info and above ----")
                lines.forEach { print($0) }
            }
        }
    }
}
