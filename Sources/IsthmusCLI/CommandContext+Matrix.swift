import Bridge
import IsthmusCommon
import IsthmusConfig
import Matrix
import MatrixClient

extension CommandContext {
    /// A client for one-shot CLI calls in appservice mode: the as_token, short retries (an admin is waiting).
    func matrixClient(_ config: Config) -> MatrixClient {
        MatrixClient(
            configuration: .init(homeserverURL: config.matrix.homeserverURL, accessToken: config.appservice.asToken,
                                 requestTimeout: .seconds(15), retryPolicy: RetryPolicy(maxAttempts: 2)),
            logger: logger(config, label: "matrix.client"))
    }

    /// The ghost namespace of `config`.
    func ghostNamespace(_ config: Config) throws(CommandFailure) -> GhostNamespace {
        guard let namespace = GhostNamespace(prefix: config.appservice.ghostPrefix, serverName: config.matrix.serverName,
                                             botLocalpart: config.appservice.botLocalpart) else {
            throw CommandFailure("the config's ghost_prefix, bot_localpart or server_name do not form valid Matrix user ids")
        }
        return namespace
    }

    /// The link service over the config's store and homeserver (the admin CLI may link any MUC service): as the
    /// appservice's bot, or in client mode as the account through its stored session.
    func linkService(_ config: Config) throws(CommandFailure) -> LinkService {
        let store = try openStore(config)
        if let account = config.matrix.client {
            return LinkService(store: store, client: accountClient(config, account, store: store).client, bot: account.userID)
        }
        return LinkService(store: store, client: matrixClient(config), bot: try ghostNamespace(config).botUserID,
                           encryptedRooms: EncryptedRoomPolicy(config.encryption))
    }

    /// Runs a ``LinkService`` call; a refusal becomes a one-line ``CommandFailure``.
    func linking<T>(_ config: Config, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let refusal as LinkRefusal {
            if case .homeserverUnreachable(let reason) = refusal {
                throw CommandFailure("cannot reach the homeserver at \(config.matrix.homeserverURL.absoluteString): \(reason)")
            }
            throw CommandFailure(refusal.description)
        }
    }
}
