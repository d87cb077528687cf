import Foundation

/// A condition that did not become true before its deadline.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    public var what: String
    public var seconds: Double
    public var description: String { "timed out after \(seconds) s waiting for: \(what)" }
}

/// A failed step in a test, with a message.
public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Polls `condition` until it holds or `timeout` passes (× ``TestTimeScale``; then throws ``DeadlineExceeded``). Never a fixed sleep:
/// it returns as soon as the condition is true.
public func eventually(_ what: String, timeout: Double = 10, pollEvery: Duration = .milliseconds(20),
                       _ condition: () async throws -> Bool) async throws {
    let timeout = TestTimeScale.scaled(timeout)
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try await condition() { return }
        if Date() > deadline { throw DeadlineExceeded(what: what, seconds: timeout) }
        try await Task.sleep(for: pollEvery)
    }
}

/// Polls `probe` until it returns a value or `timeout` passes (then throws ``DeadlineExceeded``); returns the value.
public func eventuallyValue<T: Sendable>(_ what: String, timeout: Double = 10, pollEvery: Duration = .milliseconds(20),
                                         _ probe: () async throws -> T?) async throws -> T {
    let timeout = TestTimeScale.scaled(timeout)
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if let value = try await probe() { return value }
        if Date() > deadline { throw DeadlineExceeded(what: what, seconds: timeout) }
        try await Task.sleep(for: pollEvery)
    }
}
