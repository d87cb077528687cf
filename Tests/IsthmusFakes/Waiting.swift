import Foundation

/// Why a deadline-bounded wait in a test gave up.
public struct WaitTimeout: Error, CustomStringConvertible {
    public var what: String
    public var seconds: Double
    public var description: String { "timed out after \(seconds) s waiting for \(what)" }
}

/// Runs `operation`, failing with ``WaitTimeout`` if it takes longer than `seconds` (× ``TestTimeScale``).
public func withDeadline<T: Sendable>(
    _ what: String, seconds: Double = 10, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let seconds = TestTimeScale.scaled(seconds)
    return try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            throw WaitTimeout(what: what, seconds: seconds)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// Runs blocking work (e.g. ``TestBed/restart(_:)``) on its own thread, so it does not hold a thread of the
/// cooperative pool that the code under test needs meanwhile.
///
/// The thread unblocks all signals first: processes it starts inherit its signal mask, and a server started with
/// SIGTERM blocked (as it is on the test runner's threads) ignores the TERM of a later stop or restart.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            var none = sigset_t()
            sigemptyset(&none)
            pthread_sigmask(SIG_SETMASK, &none, nil)
            continuation.resume(with: Result { try body() })
        }.start()
    }
}
