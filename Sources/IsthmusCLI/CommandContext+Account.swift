import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import MatrixAccount
import MatrixClient

/// The Matrix account of client mode, for one-shot commands.
extension CommandContext {
    /// `matrix.client`, or a failure saying that `command` is for client mode.
    func matrixAccount(_ config: Config, for command: String) throws(CommandFailure) -> Config.MatrixAccount {
        guard let account = config.matrix.client else {
            throw CommandFailure("\(command) is for matrix.mode: client (the bridge as an ordinary Matrix account); "
                                 + "this config is in appservice mode, which logs in with the as_token")
        }
        return account
    }

    /// A client for the account's own login and refresh calls: no token, short retries (an admin is waiting).
    func plainMatrixClient(_ config: Config) -> MatrixClient {
        MatrixClient(configuration: .init(homeserverURL: config.matrix.homeserverURL, accessToken: "", requestTimeout: .seconds(15),
                                          retryPolicy: RetryPolicy(maxAttempts: 2)),
                     logger: logger(config, label: "matrix.client"))
    }

    /// The account's keeper over the session `store` keeps, and a client acting through it. With `logsIn`, a missing or
    /// ended session logs in with the configured password (on the configured device, else one generated now).
    func accountClient(_ config: Config, _ account: Config.MatrixAccount, store: Store,
                       logsIn: Bool = true) -> (client: MatrixClient, keeper: SessionKeeper) {
        let keeper = SessionKeeper(
            configuration: .init(userID: account.userID, deviceID: account.deviceID ?? .generated(), canLogIn: logsIn),
            password: account.password, client: plainMatrixClient(config), vault: StoreSessionVault(store: store),
            logger: logger(config, label: "matrix.session"))
        let client = MatrixClient(configuration: .init(homeserverURL: config.matrix.homeserverURL, accessToken: "",
                                                       requestTimeout: .seconds(15), retryPolicy: RetryPolicy(maxAttempts: 2)),
                                  tokens: keeper, logger: logger(config, label: "matrix.client"))
        return (client, keeper)
    }

    /// Now, as the session's times count it: milliseconds since 1970.
    static func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}
