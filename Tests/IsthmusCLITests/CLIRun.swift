import IsthmusCLI
import IsthmusCommon
import TestSupport

/// What one `isthmus` invocation produced.
struct CLIResult {
    var status: Int32
    var output: OutputCapture
    /// Standard output as the terminal shows it.
    var stdout: String { output.output }
    /// Standard error as the terminal shows it.
    var stderr: String { output.error }
}

/// Runs `isthmus <arguments>` in-process with `environment`, capturing both streams and the logs.
func isthmus(_ arguments: String..., environment: [String: String] = [:]) async -> CLIResult {
    await isthmus(arguments, environment: environment)
}

/// Runs `isthmus <arguments>` in-process with `environment` and `input` on standard input, capturing both streams and
/// the logs; `output` is where they go (a caller may watch it while the command runs).
func isthmus(_ arguments: [String], environment: [String: String] = [:], input: String? = nil,
             output: OutputCapture = OutputCapture()) async -> CLIResult {
    let status = await IsthmusCommandLine.run(
        arguments, environment: environment, print: output.print, printError: output.printError, logSink: .memory(),
        readInput: { input })
    return CLIResult(status: status, output: output)
}
