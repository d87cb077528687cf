import Foundation

/// vodozemac 0.10.0 (PyPI; the Rust Olm/Megolm Element uses) run as a child process through
/// scripts/lib/vodozemac_oracle.py, one JSON request and answer per line. Objects live in the child under names the
/// test chooses. Missing Python or vodozemac is a test failure that says to run scripts/install-deps, never a skip.
/// Each test starts its own oracle; it ends when the oracle is released (its stdin closes).
public final class VodozemacOracle {
    /// What can go wrong talking to the oracle.
    public enum Failure: Error, CustomStringConvertible {
        case notInstalled(String)
        case died(stderr: String)
        case refused(op: String, error: String)
        case badAnswer(String)

        public var description: String {
            switch self {
            case .notInstalled(let detail): "vodozemac oracle unavailable (\(detail)): run scripts/install-deps"
            case .died(let stderr): "vodozemac oracle exited: \(stderr)"
            case .refused(let op, let error): "vodozemac refused \(op): \(error)"
            case .badAnswer(let line): "vodozemac oracle answered something unreadable: \(line)"
            }
        }
    }

    /// The version the differential tests are written against (scripts/install-deps installs it).
    public static let expectedVersion = "0.10.0"

    private let process = Process()
    private let input: FileHandle
    private let output: FileHandle
    private let errors = Pipe()
    private var buffer = Data()

    /// Starts the oracle with the venv's Python (`$ISTHMUS_VENV`, else `.venv` at the repository root) and checks
    /// that it imported vodozemac 0.10.0.
    public init() throws {
        let root = Self.repositoryRoot
        let venv = ProcessInfo.processInfo.environment["ISTHMUS_VENV"].flatMap { $0.isEmpty ? nil : $0 }
            ?? root.appendingPathComponent(".venv").path
        let python = URL(fileURLWithPath: venv).appendingPathComponent("bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw Failure.notInstalled("no Python venv at \(venv)")
        }
        let toChild = Pipe(), fromChild = Pipe()
        process.executableURL = python
        process.arguments = [root.appendingPathComponent("scripts/lib/vodozemac_oracle.py").path]
        process.standardInput = toChild
        process.standardOutput = fromChild
        process.standardError = errors
        input = toChild.fileHandleForWriting
        output = fromChild.fileHandleForReading
        try process.run()
        let ready = try readAnswer()
        guard ready["ready"] as? Bool == true else {
            throw Failure.notInstalled(ready["error"] as? String ?? "vodozemac did not start")
        }
        guard let version = ready["vodozemac"] as? String, version == Self.expectedVersion else {
            throw Failure.notInstalled("vodozemac \(ready["vodozemac"] ?? "?") instead of \(Self.expectedVersion)")
        }
    }

    deinit {
        // Closing stdin ends the oracle's loop; terminate it too, in case a sibling oracle inherited the pipe.
        try? input.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// Sends `request` (`op` plus its arguments) and returns the answer; a refusal by vodozemac throws `refused`.
    @discardableResult
    public func call(_ op: String, _ arguments: [String: Any] = [:]) throws -> [String: Any] {
        let answer = try attempt(op, arguments)
        guard answer["ok"] as? Bool == true else {
            throw Failure.refused(op: op, error: answer["error"] as? String ?? "?")
        }
        return answer
    }

    /// Sends `request` and returns vodozemac's error text, or nil when it succeeded (for the refusal tests).
    public func refusal(_ op: String, _ arguments: [String: Any] = [:]) throws -> String? {
        let answer = try attempt(op, arguments)
        return answer["ok"] as? Bool == true ? nil : answer["error"] as? String ?? "?"
    }

    /// A string field of an answer.
    public func string(_ op: String, _ arguments: [String: Any] = [:], _ field: String) throws -> String {
        guard let value = try call(op, arguments)[field] as? String else { throw Failure.badAnswer("\(op) has no \(field)") }
        return value
    }

    private func attempt(_ op: String, _ arguments: [String: Any]) throws -> [String: Any] {
        var request = arguments
        request["op"] = op
        try input.write(contentsOf: JSONSerialization.data(withJSONObject: request) + Data("\n".utf8))
        return try readAnswer()
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
                let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                throw Failure.died(stderr: stderr)
            }
            buffer += chunk
        }
    }

    /// The next bytes the oracle wrote (empty at end of file). Neither `FileHandle.availableData` (it stops the
    /// process when a signal interrupts the read) nor `read(upToCount:)` (it waits for the whole count) fits a line
    /// protocol, so this is one `read(2)` that retries when interrupted.
    private func readChunk() throws -> Data {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(output.fileDescriptor, &chunk, chunk.count)
            if count >= 0 { return Data(chunk.prefix(count)) }
            guard errno == EINTR else { throw Failure.died(stderr: "read failed with errno \(errno)") }
        }
    }

    /// The directory holding Package.swift above this file.
    private static var repositoryRoot: URL {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            url.deleteLastPathComponent()
        }
        return url
    }
}

extension String {
    /// UTF-8 bytes in unpadded base64, for the oracle's byte fields.
    public var base64UTF8: String {
        var text = Data(utf8).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}
