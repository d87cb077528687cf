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

/// Runs `isthmus <arguments>` in-process with `environment`, capturing both streams and the logs.
func isthmus(_ arguments: [String], environment: [String: String] = [:]) async -> CLIResult {
    let output = OutputCapture()
    let status = await IsthmusCommandLine.run(
        arguments, environment: environment, print: output.print, printError: output.printError, logSink: .memory())
    return CLIResult(status: status, output: output)
}
