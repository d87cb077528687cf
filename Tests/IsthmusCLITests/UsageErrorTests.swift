import Testing

/// Command lines that do not fit: exit status 64, a message and the usage on stderr, nothing on stdout.
@Suite struct UsageErrorTests {
    @Test func unknownSubcommandVerbatim() async {
        let result = await isthmus("frobnicate")
        #expect(result.status == 64)
        #expect(result.stdout == "")
        #expect(result.output.errorLines == [
            "Error: Unknown subcommand 'frobnicate'.",
            "Usage: isthmus [--config <file>] <subcommand>",
            "  See 'isthmus --help' for more information.",
        ])
    }

    @Test func usageErrorOfASubcommandShowsItsUsage() async {
        let result = await isthmus("registration", "extra")
        #expect(result.status == 64)
        #expect(result.stdout == "")
        #expect(result.stderr == """
            Error: Unexpected argument 'extra'.
            Usage: isthmus registration [--config <file>]
              See 'isthmus registration --help' for more information.

            """)
    }

    @Test(arguments: [
        (["--frobnicate"], "Error: Unknown option '--frobnicate'."),
        (["-x", "registration"], "Error: Unknown option '-x'."),
        (["registration", "--force"], "Error: Unknown option '--force'."),
        (["check-config", "unexpected"], "Error: Unexpected argument 'unexpected'."),
        ([], "Error: Missing subcommand."),
        (["-c"], "Error: Missing value for '-c <file>'."),
        (["--config"], "Error: Missing value for '--config <file>'."),
        (["--config=", "check-config"], "Error: Missing value for '--config <file>'."),
        (["registration", "-c"], "Error: Missing value for '-c <file>'."),
        (["--log-level"], "Error: Missing value for '--log-level <level>'."),
        (["--log-level", "loud", "check-config"], "Error: Invalid log level 'loud'."),
        (["help", "frobnicate"], "Error: Unknown subcommand 'frobnicate'."),
        (["migrate-store", "--to", "postgresql://db"], "Error: Missing expected option '--from'."),
        (["migrate-store", "--from", "sqlite:a.sqlite"], "Error: Missing expected option '--to'."),
        (["migrate-store", "--from", "sqlite:", "--to", "postgresql://db"], "Error: The value of '--from' needs a path after sqlite:."),
        // The value is not echoed: it may hold a password.
        (["migrate-store", "--from", "sqlite:a", "--to", "mysql://u:pw@db/x"],
         "Error: The value of '--to' must be sqlite:PATH or a postgresql:// URL."),
    ])
    func exits64WithAMessage(arguments: [String], message: String) async {
        let result = await isthmus(arguments)
        #expect(result.status == 64)
        #expect(result.stdout == "")
        #expect(result.output.errorLines.first == message)
        #expect(result.output.errorLines.count == 3)
    }
}
