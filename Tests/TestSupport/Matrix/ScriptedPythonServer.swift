import Foundation

/// A small server written in Python (an implementation independent of ours), run as a child process for one test.
/// The script gets its scratch folder as `sys.argv[1]` (then `arguments`), prints the port it listens on as its first
/// line and appends what it sees to `events` in that folder, one line each; ``events()`` reads them. Killed and
/// cleaned up when released. Does process and file I/O.
///
/// Runs Debian's `/usr/bin/python3` by default: its `ssl` module, and `h2` from the `python3-h2` package.
public final class ScriptedPythonServer: @unchecked Sendable {
    /// Why the server did not start.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: Int
    /// The scratch folder (certificates, the `events` file).
    public let directory: TemporaryDirectory
    private let process = Process()

    /// Starts `script` and waits (at most 30 s) for its port.
    public init(script: String, arguments: [String] = [], in directory: TemporaryDirectory? = nil,
                python: String = "/usr/bin/python3") throws {
        self.directory = try directory ?? TemporaryDirectory()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script, self.directory.path] + arguments
        process.standardOutput = output
        try process.run()
        do {
            port = try Self.readPort(from: output)
        } catch {
            Self.stop(process)   // deinit does not run when init throws
            throw error
        }
    }

    deinit { Self.stop(process) }

    private static func readPort(from output: Pipe) throws -> Int {
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let more = output.fileHandleForReading.availableData   // blocks until the script prints or exits
            guard !more.isEmpty else { throw Failure(description: "the Python server exited before printing its port") }
            line += more
        }
        guard let text = String(decoding: line, as: UTF8.self).split(separator: "\n").first, let port = Int(text) else {
            throw Failure(description: "the Python server printed no port")
        }
        return port
    }

    /// Kills the script and waits for it (at most 10 s).
    private static func stop(_ process: Process) {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        _ = process.waitForExit(timeout: 10)
    }

    /// The lines the script appended to `events` so far.
    public func events() -> [String] {
        guard let text = try? String(contentsOfFile: directory.path("events"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init)
    }

    /// The events that start with `prefix` (e.g. `accept`).
    public func events(_ prefix: String) -> [String] { events().filter { $0.hasPrefix(prefix) } }
}
