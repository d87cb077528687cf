import IsthmusCommon
import Testing

/// Help and usage text, verbatim: what an operator reads is part of the interface.
@Suite struct HelpTests {
    static let topLevelHelp = """
        OVERVIEW: Isthmus bridges XMPP multi-user chat rooms and Matrix rooms.

        USAGE: isthmus [--config <file>] <subcommand>

        OPTIONS:
          -c, --config <file>     Config file (default: $ISTHMUS_CONFIG, then
                                  config/isthmus.yaml).
          --log-level <level>     Log level: trace, debug, info, notice, warning, error
                                  or critical (overrides logging.level in the config).
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          serve                   Run the bridge until SIGTERM or SIGINT.
          link                    Link a Matrix room with an XMPP MUC.
          unlink                  Unlink a Matrix room from its XMPP MUC.
          links                   List linked rooms and their status.
          login                   Log in as the bridge's Matrix account (client mode).
          logout                  Log the bridge's Matrix account out (client mode).
          doctor                  Check the XMPP server and the homeserver; say plainly
                                  what works and what does not.
          registration            Print the registration YAML to give the homeserver.
          check-config            Load and validate the config file.
          migrate-store           Copy the bridge's database to another database (SQLite
                                  to PostgreSQL).

          See 'isthmus help <subcommand>' for detailed help.

        """

    static let registrationHelp = """
        OVERVIEW: Print the registration YAML to give the homeserver.

        Save the output to a file, list that file under app_service_config_files in
        Synapse's homeserver.yaml, and restart Synapse. Regenerate it after changing
        matrix.server_name or any appservice key other than listen.

        USAGE: isthmus registration [--config <file>]

        OPTIONS:
          -c, --config <file>     Config file (default: $ISTHMUS_CONFIG, then
                                  config/isthmus.yaml).
          --log-level <level>     Log level: trace, debug, info, notice, warning, error
                                  or critical (overrides logging.level in the config).
          -h, --help              Show help information.

        """

    static let checkConfigHelp = """
        OVERVIEW: Load and validate the config file.

        USAGE: isthmus check-config [--config <file>]

        OPTIONS:
          -c, --config <file>     Config file (default: $ISTHMUS_CONFIG, then
                                  config/isthmus.yaml).
          --log-level <level>     Log level: trace, debug, info, notice, warning, error
                                  or critical (overrides logging.level in the config).
          -h, --help              Show help information.

        """

    static let migrateStoreHelp = """
        OVERVIEW: Copy the bridge's database to another database (SQLite to PostgreSQL).

        Stop isthmus serve first (a SQLite file that another process has open is
        refused). Both databases are first migrated to this version's schema, as serve
        would. The target must hold no bridge rows. Every table is copied in one
        transaction, then read back: the row counts and checksums printed are verified
        equal. Afterwards, set database.url in the config (instead of database.path) and
        start serve. Passwords in URLs are never printed.

        USAGE: isthmus migrate-store [--config <file>] [--from <database>] [--to <database>] [--dry-run]

        OPTIONS:
          --from <database>       The source: sqlite:PATH or a postgresql:// URL.
          --to <database>         The target: a postgresql:// URL or sqlite:PATH.
          --dry-run               Check both databases and print the source's row
                                  counts; copy nothing.
          -c, --config <file>     Config file (default: $ISTHMUS_CONFIG, then
                                  config/isthmus.yaml).
          --log-level <level>     Log level: trace, debug, info, notice, warning, error
                                  or critical (overrides logging.level in the config).
          -h, --help              Show help information.

        """

    static let loginHelp = """
        OVERVIEW: Log in as the bridge's Matrix account (client mode).

        For matrix.mode: client. Logs in as matrix.client.user_id on
        matrix.client.device_id (else the device of the stored session, else a new one),
        asking for a refresh token, and stores the session in the database (never
        printed); serve refreshes it as it expires. The password comes from standard
        input with --password-stdin, else from matrix.client.password or
        ISTHMUS_MATRIX_PASSWORD. With --sso, prints a URL to open in a browser and waits
        (5 minutes at most) for the homeserver to send the browser back to this command
        on 127.0.0.1. With --oauth, for homeservers that moved to OAuth 2.0
        (next-generation auth): registers Isthmus with their authorization server and
        prints a URL and a code to sign in with anywhere (the device authorization
        grant), or where the server does not offer that, a URL to open in a browser on
        this machine.

        USAGE: isthmus login [--config <file>] [--password-stdin] [--sso] [--oauth]

        OPTIONS:
          --password-stdin        Read the password from standard input.
          --sso                   Log in through the homeserver's single sign-on, in a
                                  browser.
          --oauth                 Log in through the homeserver's OAuth 2.0
                                  authorization server.
          -c, --config <file>     Config file (default: $ISTHMUS_CONFIG, then
                                  config/isthmus.yaml).
          --log-level <level>     Log level: trace, debug, info, notice, warning, error
                                  or critical (overrides logging.level in the config).
          -h, --help              Show help information.

        """

    static let logoutHelp = """
        OVERVIEW: Log the bridge's Matrix account out (client mode).

        For matrix.mode: client. Ends the stored session at the homeserver, which
        deletes its device (refreshing an expired access token first) — a session minted
        through OAuth 2.0 is revoked at the authorization server instead — then deletes
        the session from the database. When the homeserver had already ended it, only
        the stored copy is deleted, and logout says so. Run it while serve is stopped,
        or serve logs in again with the configured password.

        USAGE: isthmus logout [--config <file>]

        OPTIONS:
          -c, --config <file>     Config file (default: $ISTHMUS_CONFIG, then
                                  config/isthmus.yaml).
          --log-level <level>     Log level: trace, debug, info, notice, warning, error
                                  or critical (overrides logging.level in the config).
          -h, --help              Show help information.

        """

    @Test func loginAndLogoutHelp() async {
        let login = await isthmus("login", "--help")
        #expect(login.status == 0)
        #expect(login.stdout == Self.loginHelp)
        let logout = await isthmus("help", "logout")
        #expect(logout.status == 0)
        #expect(logout.stdout == Self.logoutHelp)
    }

    @Test func migrateStoreHelp() async {
        let result = await isthmus("migrate-store", "--help")
        #expect(result.status == 0)
        #expect(result.stdout == Self.migrateStoreHelp)
    }

    @Test func topLevelHelp() async {
        let result = await isthmus("--help")
        #expect(result.status == 0)
        #expect(result.stdout == Self.topLevelHelp)
        #expect(result.stderr == "")
    }

    @Test(arguments: [["-h"], ["help"]])
    func topLevelHelpSpellings(_ arguments: [String]) async {
        let result = await isthmus(arguments)
        #expect(result.status == 0)
        #expect(result.stdout == Self.topLevelHelp)
    }

    @Test func registrationHelp() async {
        let result = await isthmus("registration", "--help")
        #expect(result.status == 0)
        #expect(result.stdout == Self.registrationHelp)
        #expect(result.stderr == "")
    }

    @Test func helpSubcommandAndShortFlagGiveTheSameText() async {
        #expect(await isthmus("help", "registration").stdout == Self.registrationHelp)
        #expect(await isthmus("-h", "registration").stdout == Self.registrationHelp)
        #expect(await isthmus("registration", "-h", "-c", "unused.yaml").stdout == Self.registrationHelp)
    }

    @Test func checkConfigHelp() async {
        let result = await isthmus("check-config", "--help")
        #expect(result.status == 0)
        #expect(result.stdout == Self.checkConfigHelp)
    }

    @Test func helpLinesFitIn80Columns() async {
        for arguments in [["--help"], ["registration", "--help"], ["check-config", "--help"], ["login", "--help"], ["logout", "--help"]] {
            let result = await isthmus(arguments)
            #expect(result.status == 0)
            for line in result.stdout.split(separator: "\n") {
                #expect(line.count <= 80, "\(arguments): \(line)")
            }
        }
    }

    @Test func version() async {
        let result = await isthmus("--version")
        #expect(result.status == 0)
        #expect(result.stdout == "\(IsthmusVersion.string)\n")
        #expect(result.stdout == "0.1.0\n")
        #expect(result.stderr == "")
    }
}
