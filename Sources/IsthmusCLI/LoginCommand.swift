import Bridge
import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import Matrix
import MatrixAccount
import MatrixClient

/// `isthmus login`: logs the Matrix account of client mode in — with a password, through single sign-on, or through the
/// homeserver's OAuth 2.0 authorization server (``OAuthLogin``) — and stores the session for `serve`. Prints who and on
/// which device, never a token.
struct LoginCommand: Subcommand {
    static let configuration = CommandConfiguration(
        name: "login",
        abstract: "Log in as the bridge's Matrix account (client mode).",
        discussion: """
            For matrix.mode: client. Logs in as matrix.client.user_id on matrix.client.device_id (else the device of \
            the stored session, else a new one), asking for a refresh token, and stores the session in the database \
            (never printed); serve refreshes it as it expires. The password comes from standard input with \
            --password-stdin, else from matrix.client.password or ISTHMUS_MATRIX_PASSWORD. With --sso, prints a URL to \
            open in a browser and waits (5 minutes at most) for the homeserver to send the browser back to this \
            command on 127.0.0.1. With --oauth, for homeservers that moved to OAuth 2.0 (next-generation auth): \
            registers Isthmus with their authorization server and prints a URL and a code to sign in with anywhere \
            (the device authorization grant), or where the server does not offer that, a URL to open in a browser on \
            this machine.
            """,
        options: [
            .init(long: "password-stdin", help: "Read the password from standard input."),
            .init(long: "sso", help: "Log in through the homeserver's single sign-on, in a browser."),
            .init(long: "oauth", help: "Log in through the homeserver's OAuth 2.0 authorization server."),
        ])

    /// How long `--sso` waits for the browser.
    static let ssoTimeout: Duration = .seconds(300)

    let passwordFromStandardInput: Bool
    let singleSignOn: Bool
    let oauth: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requirePositionals([], command: Self.configuration.name)
        passwordFromStandardInput = arguments.flag("password-stdin")
        singleSignOn = arguments.flag("sso")
        oauth = arguments.flag("oauth")
        if [passwordFromStandardInput, singleSignOn, oauth].filter({ $0 }).count > 1 {
            throw UsageError("--password-stdin, --sso and --oauth do not go together.", command: Self.configuration.name)
        }
    }

    func run(_ context: CommandContext) async throws {
        let config = try context.loadConfig()
        let account = try context.matrixAccount(config, for: "isthmus login")
        let store = try context.openStore(config)
        let vault = StoreSessionVault(store: store)
        let client = context.plainMatrixClient(config)
        let homeserver = config.matrix.homeserverURL.absoluteString
        if oauth {
            try await logInThroughOAuth(config, account, client: client, vault: vault, context)
            return
        }
        let password = singleSignOn ? nil : try password(account, context)
        let (flows, oauth) = try await Self.discover(client, homeserver: homeserver)
        let wanted = singleSignOn ? LoginType.sso : LoginType.password
        guard flows.offers(wanted), !singleSignOn || flows.offers(LoginType.token) else {
            throw CommandFailure(Self.notOffered(wanted, flows: flows, oauth: oauth, homeserver: homeserver))
        }
        if oauth != nil {
            context.print("Note: \(homeserver) uses OAuth 2.0 (next-generation auth); logging in through the login it still offers.")
        }
        let kept = try await vault.session(of: account.userID)
        let device = account.deviceID ?? kept?.deviceID ?? .generated()
        let credential: LoginCredential
        if let password {
            credential = .password(user: account.userID.rawValue, password: password)
        } else {
            credential = .token(try await Self.singleSignOn(config, account, context))
        }
        let answer: LoginResponse
        do {
            answer = try await client.login(LoginRequest(credential, deviceID: device, initialDeviceDisplayName: SessionKeeper.deviceDisplayName,
                                                         refreshToken: true))
        } catch {
            throw CommandFailure(error.kind == .homeserver
                ? "the homeserver refused the login as \(account.userID): \(error.message)\(error.errcode.map { " (\($0))" } ?? "")"
                : "cannot log in at \(homeserver): \(error.message)")
        }
        guard answer.userID == account.userID else {
            try? await MatrixClient(configuration: .init(homeserverURL: config.matrix.homeserverURL, accessToken: answer.accessToken.secret),
                                    logger: context.logger(config, label: "matrix.client")).logout()
            throw CommandFailure("the login answered for \(answer.userID), not matrix.client.user_id \(account.userID); that session was ended again")
        }
        let session = MatrixSession(login: answer, requested: device, now: CommandContext.nowMilliseconds())
        do {
            try await vault.keep(session)
        } catch {
            throw CommandFailure("logged in, but the session could not be stored in \(config.database.location): \(error)")
        }
        Self.printLoggedIn(session, lifetime: answer.expiresInMilliseconds, context)
    }

    /// `--oauth`: the session ``OAuthLogin`` mints, kept.
    private func logInThroughOAuth(_ config: Config, _ account: Config.MatrixAccount, client: MatrixClient, vault: StoreSessionVault,
                                   _ context: CommandContext) async throws {
        let homeserver = config.matrix.homeserverURL.absoluteString
        let metadata: AuthMetadata?
        do {
            metadata = try await client.authMetadata()
        } catch {
            throw CommandFailure("cannot reach the homeserver at \(homeserver): \(error.message)")
        }
        guard let metadata else {
            throw CommandFailure("\(homeserver) does not use OAuth 2.0 (it has no auth_metadata): log in with a password or --sso")
        }
        let kept = try await vault.session(of: account.userID)
        let device = account.deviceID ?? kept?.deviceID ?? .generated()
        let session = try await OAuthLogin(config: config, account: account, context: context, client: client, metadata: metadata).run(device: device)
        do {
            try await vault.keep(session)
        } catch {
            throw CommandFailure("logged in, but the session could not be stored in \(config.database.location): \(error)")
        }
        Self.printLoggedIn(session, lifetime: session.expiresAt.map { $0 - CommandContext.nowMilliseconds() }, context, through: "OAuth 2.0")
    }

    static func printLoggedIn(_ session: MatrixSession, lifetime: Int64?, _ context: CommandContext, through: String? = nil) {
        context.print("Logged in as \(session.userID) on device \(session.deviceID)\(through.map { " through \($0)" } ?? ""); "
                      + "the session is stored in the database.")
        if let lifetime {
            context.print("Its access token lasts \(max(0, lifetime) / 1000) s; serve refreshes it with the stored refresh token\(session.refreshToken == nil ? " (none was given: serve logs in again when it expires)" : "").")
        }
    }

    /// The password: from standard input (up to its first line break), else the config's.
    private func password(_ account: Config.MatrixAccount, _ context: CommandContext) throws(CommandFailure) -> String {
        if passwordFromStandardInput {
            let line = context.readInput()?.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).first.map(String.init)
            guard let line, !line.isEmpty else { throw CommandFailure("--password-stdin: standard input held no password") }
            return line
        }
        guard let password = account.password else {
            throw CommandFailure("no password: give it on standard input with --password-stdin, set matrix.client.password or "
                                 + "\(Config.SecretVariable.matrixPassword), or log in with --sso or --oauth")
        }
        return password
    }

    /// The login types offered, and the OAuth 2.0 server the homeserver delegates to, if any.
    static func discover(_ client: MatrixClient, homeserver: String) async throws(CommandFailure) -> (LoginFlows, AuthMetadata?) {
        let oauth = try? await client.authMetadata()
        do {
            return (try await client.loginFlows(), oauth ?? nil)
        } catch where error.status == 404 {
            return (LoginFlows(flows: []), oauth ?? nil)   // no legacy login API at all
        } catch {
            throw CommandFailure("cannot reach the homeserver at \(homeserver): \(error.message)")
        }
    }

    /// Why `wanted` cannot be used, and what to do.
    static func notOffered(_ wanted: String, flows: LoginFlows, oauth: AuthMetadata?, homeserver: String) -> String {
        if oauth != nil {
            return "\(homeserver) uses OAuth 2.0 (next-generation auth) and offers no \(wanted) login: use isthmus login --oauth"
        }
        let offered = flows.flows.map(\.type).joined(separator: ", ")
        return "\(homeserver) offers no \(wanted) login (it offers: \(offered.isEmpty ? "none" : offered))"
            + (wanted == LoginType.password && flows.offers(LoginType.sso) ? "; use isthmus login --sso" : "")
    }

    /// Prints the single sign-on URL and waits for the login token the homeserver sends the browser back with.
    static func singleSignOn(_ config: Config, _ account: Config.MatrixAccount, _ context: CommandContext) async throws(CommandFailure) -> String {
        let callback: SSOCallback
        do {
            callback = try SSOCallback(logger: context.logger(config, label: "sso"))
        } catch {
            throw CommandFailure("cannot listen on 127.0.0.1 for the single sign-on's answer: \(error)")
        }
        defer { callback.close() }
        var base = config.matrix.homeserverURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        context.print("Open this URL in a browser and sign in as \(account.userID):")
        context.print("\(base)/_matrix/client/v3/login/sso/redirect?redirectUrl=\(PercentEncoding.encode(callback.redirectURL))")
        context.print("Waiting for the homeserver to send the browser back to \(callback.redirectURL) …")
        guard let token = await callback.loginToken(timeout: ssoTimeout) else {
            throw CommandFailure("no single sign-on answer within \(ssoTimeout.components.seconds / 60) minutes; run isthmus login --sso again")
        }
        return token
    }
}
