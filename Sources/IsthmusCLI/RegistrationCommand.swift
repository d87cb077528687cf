/// `isthmus registration`: prints the appservice registration YAML for the homeserver.
struct RegistrationCommand: Subcommand {
    static let configuration = CommandConfiguration(
        name: "registration",
        abstract: "Print the appservice registration YAML for the homeserver.",
        discussion: "Save the output and list it in the homeserver's app_service_config_files (Synapse).")

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requirePositionals([], command: Self.configuration.name)
    }

    func run(_ context: CommandContext) async throws {
        let config = try context.loadConfig()
        context.print(String(config.registrationYAML().dropLast()))
    }
}
