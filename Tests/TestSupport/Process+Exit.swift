import Foundation

extension Process {
    /// Waits for the process to exit, polling ``isRunning`` for at most `timeout` seconds; true if it exited.
    /// Blocks the calling thread.
    ///
    /// Polled so that the wait has a deadline (`waitUntilExit()` has none). Once the process has exited,
    /// `waitUntilExit()` is still called — it then returns at once — because on Linux it is what lets go of the
    /// run-loop source `run()` made: that source retains the process, and the process keeps it until
    /// `waitUntilExit()` clears it (swift-corelibs-foundation's `Process.swift`). A process only polled stays in that
    /// cycle for good, with its pipes and their descriptors; LeakSanitizer reported every one
    /// (docs/reliability.md, "AddressSanitizer").
    public func waitForExit(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning && Date() < deadline { usleep(10_000) }
        guard !isRunning else { return false }
        waitUntilExit()
        return true
    }
}
