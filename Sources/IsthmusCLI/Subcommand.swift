/// One `isthmus` subcommand: a small type with a configuration, argument validation and `run`.
public protocol Subcommand: Sendable {
    static var configuration: CommandConfiguration { get }
    /// Validates the parsed arguments; throws ``UsageError`` (exit 64) when they do not fit.
    init(_ arguments: ParsedArguments) throws(UsageError)
    /// Does the work. Throws ``CommandFailure`` (exit 1) with a one-line reason on failure.
    func run(_ context: CommandContext) async throws
}

/// A command line that does not fit the command's usage. Exit status 64 (`EX_USAGE`).
public struct UsageError: Error, Sendable, Equatable {
    public var message: String
    /// The command whose usage to show (nil: the top level).
    public var command: String?
    public init(_ message: String, command: String? = nil) {
        self.message = message
        self.command = command
    }
}

/// Anything else that failed: bad config, unreachable server, state conflicts. Exit status 1.
public struct CommandFailure: Error, Sendable, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// What the parser found on the command line for one subcommand.
public struct ParsedArguments: Sendable {
    /// Positional arguments in order.
    public var positionals: [String]
    /// Options by long name; flags map to `"true"`.
    public var options: [String: String]
    /// Whether `--flag` was given.
    public func flag(_ name: String) -> Bool { options[name] != nil }

    /// Exactly `count` positionals, else a usage error naming what is missing or extra.
    public func requirePositionals(_ names: [String], command: String) throws(UsageError) {
        if positionals.count < names.count {
            throw UsageError("Missing expected argument '<\(names[positionals.count])>'.", command: command)
        }
        if positionals.count > names.count {
            throw UsageError("Unexpected argument '\(positionals[names.count])'.", command: command)
        }
    }
}
