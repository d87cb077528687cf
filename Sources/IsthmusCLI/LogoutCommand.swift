import Bridge
import IsthmusCommon
import IsthmusConfig
import MatrixAccount
import MatrixClient

/// `isthmus logout`: ends the Matrix account's stored session at the homeserver and deletes it from the store.
struct LogoutCommand: Subcommand {
    static let configuration = CommandConfiguration(
        name: "logout",
        abstract: "Log the bridge's Matrix account out (client mode).",
        discussion: """
            For matrix.mode: client. Ends the stored session at the homeserver, which deletes its device (refreshing an \
            expired access token first) — a session minted through OAuth 2.0 is revoked at the authorization server \
            instead — then deletes the session from the database. When the homeserver had already \
            ended it, only the stored copy is deleted, and logout says so. Run it while serve is stopped, or serve \
            logs in again with the configured password.
            """)

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requirePositionals([], command: Self.configuration.name)
    }

    func run(_ context: CommandContext) async throws {
        let config = try context.loadConfig()
        let account = try context.matrixAccount(config, for: "isthmus logout")
        let store = try context.openStore(config)
        let vault = StoreSessionVault(store: store)
        guard let stored = try await vault.session(of: account.userID) else {
            context.print("No Matrix session is stored for \(account.userID); nothing to log out.")
            return
        }
        if stored.authAPI == .oauth {
            try await revoke(stored, config: config, context)
            try await vault.forget(account.userID)
            context.print("Logged out \(account.userID): the authorization server revoked the session of device \(stored.deviceID); "
                          + "the stored session is deleted.")
            return
        }
        let (client, keeper) = context.accountClient(config, account, store: store, logsIn: false)
        let outcome: String
        do {
            try await client.logout()
            outcome = "the homeserver ended the session and deleted device \(stored.deviceID)"
        } catch {
            switch await keeper.stall {
            case .loggedOut?, .softLoggedOut?:
                outcome = "the homeserver had already ended the session of device \(stored.deviceID)"
            default:
                guard error.status == 401, error.errcode == .unknownToken else {
                    throw CommandFailure("cannot log out at \(config.matrix.homeserverURL.absoluteString): \(error.message); "
                                         + "the session stays stored (run isthmus logout again)")
                }
                outcome = "the homeserver had already ended the session of device \(stored.deviceID)"
            }
        }
        try await vault.forget(account.userID)
        context.print("Logged out \(account.userID): \(outcome); the stored session is deleted.")
    }

    /// Revokes an OAuth 2.0 session (RFC 7009: the server ends its access and refresh token together; an unknown or
    /// already revoked token is answered 200 as well).
    private func revoke(_ session: MatrixSession, config: Config, _ context: CommandContext) async throws(CommandFailure) {
        let client = context.plainMatrixClient(config)
        do {
            guard let endpoint = try await client.authMetadata()?.revocationEndpoint, let clientID = session.oauthClientID else {
                throw CommandFailure("the homeserver names no OAuth 2.0 revocation endpoint; the session stays stored")
            }
            try await client.revoke(at: endpoint, accessToken: session.accessToken, clientID: clientID)
        } catch let error as MatrixError {
            throw CommandFailure("cannot revoke the session: \(error.message); the session stays stored (run isthmus logout again)")
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure("cannot revoke the session: \(error)")
        }
    }
}
