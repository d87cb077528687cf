import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import IsthmusCommon

/// The `isthmus` command line: global options, subcommand dispatch, help, exit codes.
///
/// Exit codes: 0 success, 64 usage error (message + usage on stderr), 1 any other failure (one line on stderr).
public enum IsthmusCommandLine {
    /// Every working subcommand, in help order.
    static let subcommands: [any Subcommand.Type] = [
        ServeCommand.self,
        LinkCommand.self,
        UnlinkCommand.self,
        LinksCommand.self,
        LoginCommand.self,
        LogoutCommand.self,
        DoctorCommand.self,
        RegistrationCommand.self,
        CheckConfigCommand.self,
        MigrateStoreCommand.self,
    ]

    static let abstract = "Isthmus bridges XMPP multi-user chat rooms and Matrix rooms."
    static let usage = "isthmus [--config <file>] <subcommand>"
    static let globalOptions: [CommandConfiguration.Option] = [
        .init(long: "config", short: "c", valueName: "<file>",
              help: "Config file (default: $ISTHMUS_CONFIG, then config/isthmus.yaml)."),
        .init(long: "log-level", valueName: "<level>",
              help: "Log level: trace, debug, info, notice, warning, error or critical (overrides logging.level in the config)."),
    ]

    /// Runs the process's command line and exits with its status.
    public static func main() async -> Never {
        OpenSSLLifetime.keepUntilProcessExit()
        signal(SIGPIPE, SIG_IGN)
        let status = await run(
            Array(CommandLine.arguments.dropFirst()),
            environment: ProcessInfo.processInfo.environment,
            print: { StandardStreams.writeOutput($0 + "\n") },
            printError: { StandardStreams.writeError($0 + "\n") },
            logSink: .makeStandardError(),
            readInput: { StandardStreams.readAllInput() })
        exit(status)
    }

    /// Parses `arguments` and runs the subcommand; returns the exit status. Testable: all output goes through the closures,
    /// and standard input comes from `readInput`.
    public static func run(_ arguments: [String], environment: [String: String],
                           print: @escaping @Sendable (String) -> Void,
                           printError: @escaping @Sendable (String) -> Void,
                           logSink: LogSink = .makeStandardError(),
                           readInput: @escaping @Sendable () -> String? = { nil }) async -> Int32 {
        do {
            let invocation = try CommandLineParser.parse(arguments, subcommands: subcommands)
            switch invocation {
            case .help(let command):
                print(HelpFormatter.help(for: command))
                return 0
            case .version:
                print(IsthmusVersion.string)
                return 0
            case .run(let command, let parsed, let global):
                let subcommand = try command.init(parsed)
                let context = CommandContext(
                    print: print, printError: printError, environment: environment,
                    configPath: global.configPath ?? environment["ISTHMUS_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
                        ?? "config/isthmus.yaml",
                    logLevelOverride: global.logLevel, logSink: logSink, readInput: readInput)
                try await subcommand.run(context)
                return 0
            }
        } catch let error as UsageError {
            printError("Error: \(error.message)")
            let command = error.command.flatMap { name in subcommands.first { $0.configuration.name == name } }
            printError("Usage: \(command?.configuration.usage ?? usage)")
            printError("  See 'isthmus\(error.command.map { " \($0)" } ?? "") --help' for more information.")
            return 64
        } catch let error as CommandFailure {
            printError("Error: \(error.message)")
            return 1
        } catch {
            printError("Error: \(error)")
            return 1
        }
    }
}
