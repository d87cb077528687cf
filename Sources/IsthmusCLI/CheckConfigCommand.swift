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
        if let account = config.matrix.client {
            context.print("Matrix: client mode, as \(account.userID) on \(config.matrix.homeserverURL.absoluteString) "
                          + "(\(account.password == nil ? "no password: the session isthmus login stores" : "password configured")); "
                          + "XMPP occupants speak through it, e.g. \(config.relay.matrixFormat)")
        }
        if let client = config.xmpp.client {
            let server = client.looksUpSRV ? "from SRV of \(client.jid.domain), else \(client.host):\(client.port)"
                : "\(client.host):\(client.port)"
            context.print("XMPP: client mode, as \(client.jid) (server: \(server); tls: \(client.tls.rawValue)); "
                          + "Matrix users speak as \(config.xmpp.botNick), e.g. \(config.relay.xmppFormat) (isthmus doctor logs in to check)")
        } else {
            context.print("XMPP: component \(config.xmpp.componentDomain) via \(config.xmpp.serverHost):\(config.xmpp.serverPort)")
        }
    }
}
