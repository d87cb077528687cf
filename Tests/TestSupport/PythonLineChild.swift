import Foundation

/// A Python script of scripts/lib run by the venv's Python (`$ISTHMUS_VENV`, else `.venv` at the repository root) as
/// a child process, one JSON request and answer per line: the first line it writes says whether it is ready. Missing
/// Python or a missing package is a test failure that says to run scripts/install-deps, never a skip. The child ends
/// when this is released (its stdin closes).
public final class PythonLineChild: @unchecked Sendable {
    /// What can go wrong talking to the child.
    public enum Failure: Error, CustomStringConvertible {
        case notInstalled(String)
        case died(script: String, stderr: String)
        case refused(op: String, error: String)
        case badAnswer(String)

        public var description: String {
            switch self {
            case .notInstalled(let detail): "\(detail): run scripts/install-deps"
            case .died(let script, let stderr): "\(script) exited: \(stderr)"
            case .refused(let op, let error): "\(op) refused: \(error)"
            case .badAnswer(let line): "unreadable answer: \(line)"
            }
        }
    }

    private let script: String
    private let process = Process()
    private let input: FileHandle
    private let output: FileHandle
    /// The child's stderr, in a file: a pipe nobody reads until the child dies fills up (64 KiB) and stops a chatty
    /// child (nio warns about every event it cannot decrypt) in the middle of a request.
    private let errors: FileHandle
    private let errorsPath: String
    private var buffer = Data()
    /// One request at a time (the line protocol has no ids).
    private let lock = NSLock()

    /// Starts scripts/lib/`script` and returns with its ready line (`["ready": true, …]` or a `notInstalled` failure
    /// with its `error`).
    public init(script: String) throws {
        self.script = script
        let root = ConfigFixture.repositoryRoot
        let venv = ProcessInfo.processInfo.environment["ISTHMUS_VENV"].flatMap { $0.isEmpty ? nil : $0 }
            ?? root.appendingPathComponent(".venv").path
        let python = URL(fileURLWithPath: venv).appendingPathComponent("bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw Failure.notInstalled("no Python venv at \(venv)")
        }
        let toChild = Pipe(), fromChild = Pipe()
        errorsPath = FileManager.default.temporaryDirectory.appendingPathComponent("isthmus-\(script)-\(UUID().uuidString).stderr").path
        _ = FileManager.default.createFile(atPath: errorsPath, contents: nil)
        guard let errors = FileHandle(forWritingAtPath: errorsPath) else { throw Failure.notInstalled("cannot create \(errorsPath)") }
        self.errors = errors
        process.executableURL = python
        process.arguments = [root.appendingPathComponent("scripts/lib/\(script)").path]
        process.standardInput = toChild
        process.standardOutput = fromChild
        process.standardError = errors
        input = toChild.fileHandleForWriting
        output = fromChild.fileHandleForReading
        try process.run()
    }

    deinit {
        // Closing stdin ends the child's loop; terminate it too, in case a sibling inherited the pipe.
        try? input.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? errors.close()
        try? FileManager.default.removeItem(atPath: errorsPath)
    }

    /// The ready line: its fields when it says ready, else `notInstalled` with its error.
    public func ready() throws -> [String: Any] {
        let line = try lock.withLock { try readAnswer() }
        guard line["ready"] as? Bool == true else { throw Failure.notInstalled("\(script): \(line["error"] as? String ?? "did not start")") }
        return line
    }

    /// ``ready()`` on a Dispatch thread (a child that imports a lot takes seconds to start; see ``callAsync(_:_:)``).
    public func readyAsync() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async { continuation.resume(with: Result { _ = try self.ready() }) }
        }
    }

    /// Sends `op` with its arguments and returns the answer; a refusal throws `refused`.
    @discardableResult
    public func call(_ op: String, _ arguments: [String: Any] = [:]) throws -> [String: Any] {
        let answer = try attempt(op, arguments)
        guard answer["ok"] as? Bool == true else { throw Failure.refused(op: op, error: answer["error"] as? String ?? "?") }
        return answer
    }

    /// ``call(_:_:)`` on a Dispatch thread, for a child that takes its time (a network client): the cooperative pool
    /// is never blocked on its pipe.
    @discardableResult
    public func callAsync(_ op: String, _ arguments: [String: Any] = [:]) async throws -> [String: Any] {
        let request = try JSONSerialization.data(withJSONObject: arguments)
        let answer: Data = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    let arguments = try JSONSerialization.jsonObject(with: request) as? [String: Any] ?? [:]
                    return try JSONSerialization.data(withJSONObject: self.call(op, arguments))
                })
            }
        }
        return try JSONSerialization.jsonObject(with: answer) as? [String: Any] ?? [:]
    }

    /// Sends `op` and returns the child's error text, or nil when it succeeded (for refusal tests).
    public func refusal(_ op: String, _ arguments: [String: Any] = [:]) throws -> String? {
        let answer = try attempt(op, arguments)
        return answer["ok"] as? Bool == true ? nil : answer["error"] as? String ?? "?"
    }

    private func attempt(_ op: String, _ arguments: [String: Any]) throws -> [String: Any] {
        var request = arguments
        request["op"] = op
        let line = try JSONSerialization.data(withJSONObject: request) + Data("\n".utf8)
        return try lock.withLock {
            try input.write(contentsOf: line)
            return try readAnswer()
        }
    }

    private func readAnswer() throws -> [String: Any] {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[(newline + 1)...])
                guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                    throw Failure.badAnswer(String(decoding: line, as: UTF8.self))
                }
                return object
            }
            let chunk = try readChunk()
            guard !chunk.isEmpty else {
                process.waitUntilExit()
                let stderr = String((try? String(contentsOfFile: errorsPath, encoding: .utf8))?.suffix(4000) ?? "")
                throw Failure.died(script: script, stderr: stderr)
            }
            buffer += chunk
        }
    }

    /// The next bytes the child wrote (empty at end of file). Neither `FileHandle.availableData` (it stops the
    /// process when a signal interrupts the read) nor `read(upToCount:)` (it waits for the whole count) fits a line
    /// protocol, so this is one `read(2)` that retries when interrupted.
    private func readChunk() throws -> Data {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(output.fileDescriptor, &chunk, chunk.count)
            if count >= 0 { return Data(chunk.prefix(count)) }
            guard errno == EINTR else { throw Failure.died(script: script, stderr: "read failed with errno \(errno)") }
        }
    }
}
