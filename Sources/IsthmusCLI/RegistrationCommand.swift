/// `isthmus registration`: prints the appservice registration YAML for the homeserver.
struct RegistrationCommand: Subcommand {
    static let configuration = CommandConfiguration(
        name: "registration",
        abstract: "Print the registration YAML to give the homeserver.",
        discussion: """
            Save the output to a file, list that file under app_service_config_files in Synapse's \
            homeserver.yaml, and restart Synapse. Regenerate it after changing matrix.server_name or any \
            appservice key other than listen.
            """)

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requirePositionals([], command: Self.configuration.name)
    }

    func run(_ context: CommandContext) async throws {
        let config = try context.loadConfig()
        if let account = config.matrix.client {
            throw CommandFailure("matrix.mode is client: the bridge runs as the ordinary account \(account.userID) and needs no "
                                 + "appservice registration (log it in with isthmus login)")
        }
        context.print(String(config.registrationYAML().dropLast()))
    }
}
