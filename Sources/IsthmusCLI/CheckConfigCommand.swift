/// `isthmus check-config`: loads and validates the config file, reporting warnings.
struct CheckConfigCommand: Subcommand {
    static let configuration = CommandConfiguration(
        name: "check-config",
        abstract: "Load and validate the config file.")

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requirePositionals([], command: Self.configuration.name)
    }

    func run(_ context: CommandContext) async throws {
        let config = try context.loadConfig()
        for warning in config.warnings { context.printError("Warning: \(warning.description)") }
        context.print("Config OK: \(context.configPath)")
    }
}
