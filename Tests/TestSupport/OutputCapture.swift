import Synchronization

/// Collects what a command writes to standard output and standard error, for asserting it verbatim.
///
/// Hand ``print`` and ``printError`` to the code under test (e.g. `IsthmusCommandLine.run`); each call is one line,
/// as with the real streams (which add the newline). Thread-safe: a lock guards the lines, so any task may write.
public final class OutputCapture: Sendable {
    private let lines = Mutex<(output: [String], error: [String])>(([], []))

    public init() {}

    /// Appends one line to the captured standard output.
    public var print: @Sendable (String) -> Void { { [self] text in lines.withLock { $0.output.append(text) } } }
    /// Appends one line to the captured standard error.
    public var printError: @Sendable (String) -> Void { { [self] text in lines.withLock { $0.error.append(text) } } }

    /// Everything written to standard output, one element per `print` call.
    public var outputLines: [String] { lines.withLock { $0.output } }
    /// Everything written to standard error, one element per `printError` call.
    public var errorLines: [String] { lines.withLock { $0.error } }
    /// Standard output as the terminal would show it (each call followed by a newline).
    public var output: String { outputLines.map { $0 + "\n" }.joined() }
    /// Standard error as the terminal would show it (each call followed by a newline).
    public var error: String { errorLines.map { $0 + "\n" }.joined() }
}
