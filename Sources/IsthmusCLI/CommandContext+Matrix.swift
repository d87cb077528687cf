import IsthmusCommon
import IsthmusConfig
import Matrix
import MatrixClient

extension CommandContext {
    /// A client for one-shot CLI calls: the appservice token, short retries (an admin is waiting).
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

    /// Resolves a room argument to a room id (aliases through the homeserver).
    func resolve(_ room: LinkArguments.MatrixRoom, client: MatrixClient) async throws(CommandFailure) -> RoomID {
        switch room {
        case .id(let id):
            return id
        case .alias(let alias):
            do {
                return try await client.resolveAlias(alias).roomID
            } catch {
                if error.errcode == "M_NOT_FOUND" || error.status == 404 {
                    throw CommandFailure("unknown room: no room has the alias \(alias)")
                }
                throw CommandFailure(LinkCommand.describe(error, config: nil))
            }
        }
    }
}
