import Foundation

/// Waiting with a deadline in tests: polls a condition, never sleeps a fixed time.
public enum Deadline {
    /// The condition was not met before the deadline.
    public struct Expired: Error, CustomStringConvertible {
        public let what: String
        public let timeout: Duration
        public var description: String { "timed out after \(timeout) waiting for \(what)" }
    }

    /// Calls `check` every few milliseconds until it returns a value, or throws ``Expired`` after `timeout`.
    public static func poll<T>(timeout: Duration = .seconds(10), _ what: String, _ check: () async throws -> T?) async throws -> T {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: timeout)
        while true {
            if let value = try await check() { return value }
            guard clock.now < end else { throw Expired(what: what, timeout: timeout) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
