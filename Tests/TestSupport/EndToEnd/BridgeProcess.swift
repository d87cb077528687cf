import Foundation
import Synchronization

/// The `isthmus` binary under test, run as a real process: `serve` in the background, other subcommands to completion.
public final class BridgeProcess: @unchecked Sendable {
    /// The result of a finished CLI invocation.
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// The debug build of `isthmus` in this package (`.build/debug/isthmus`), or `$ISTHMUS_BIN`.
    public static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["ISTHMUS_BIN"], !path.isEmpty { return URL(fileURLWithPath: path) }
        var root = URL(fileURLWithPath: #filePath)
        while root.path != "/" && !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) {
            root.deleteLastPathComponent()
        }
        return root.appendingPathComponent(".build/debug/isthmus")
    }

    /// Runs `isthmus ARGS` (or another `executable`, e.g. `sqlite3`) to completion (with a deadline) and returns its
    /// status and output.
    public static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 60,
                           executable: URL = BridgeProcess.binary) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // The deadline runs on its own timer: reading the pipes blocks until the process closes them, so a check
        // between reads would never fire for a process that hangs.
        let timedOut = Mutex(false)
        let deadline = DispatchWorkItem {
            guard process.isRunning else { return }
            timedOut.withLock { $0 = true }
            process.terminate()
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: deadline)
        // stderr on another thread, so a process filling one pipe while we wait on the other cannot deadlock.
        let errData = Mutex(Data())
        let errRead = DispatchGroup()
        DispatchQueue.global().async(group: errRead) {
            let data = err.fileHandleForReading.readDataToEndOfFile()
            errData.withLock { $0 = data }
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        errRead.wait()
        process.waitUntilExit()
        deadline.cancel()
        var stderr = String(decoding: errData.withLock { $0 }, as: UTF8.self)
        if timedOut.withLock({ $0 }) { stderr += "(terminated: still running after \(timeout) s)\n" }
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: stderr)
    }

    private let process = Process()
    /// Where the serve process's stderr (its log) goes.
    public let logFile: URL

    /// Starts `isthmus serve -c CONFIG`, logging to `logFile`.
    public init(config: URL, logFile: URL, extraArguments: [String] = []) throws {
        self.logFile = logFile
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let handle = try FileHandle(forWritingTo: logFile)
        handle.seekToEndOfFile()
        process.executableURL = BridgeProcess.binary
        process.arguments = ["serve", "-c", config.path] + extraArguments
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
    }

    public var isRunning: Bool { process.isRunning }
    /// The exit status once it has exited (check ``isRunning`` first).
    public var terminationStatus: Int32 { process.terminationStatus }
    public var processIdentifier: Int32 { process.processIdentifier }

    /// SIGTERM, then waits (up to `timeout`) for a clean exit; returns the exit status.
    @discardableResult
    public func stop(timeout: Double = 20) -> Int32 {
        if process.isRunning { process.terminate() }
        return wait(timeout: timeout)
    }

    /// SIGKILL: a crash, with no chance to clean up.
    public func kill9() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        _ = wait(timeout: 10)
    }

    private func wait(timeout: Double) -> Int32 {
        if !process.waitForExit(timeout: timeout) {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        return process.terminationStatus
    }

    /// The log so far (for assertions and failure messages).
    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        _ = process.waitForExit(timeout: 10)   // also frees the Process (see waitForExit)
    }
}
