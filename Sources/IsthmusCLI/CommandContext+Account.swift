import Bridge
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
        AccountClient.plainClient(config, commandLine: true, logger: logger(config, label: "matrix"))
    }

    /// The account's keeper over the session `store` keeps, and a client acting through it. With `logsIn`, a missing or
    /// ended session logs in with the configured password (on the configured device, else one generated now).
    func accountClient(_ config: Config, _ account: Config.MatrixAccount, store: Store,
                       logsIn: Bool = true) -> (client: MatrixClient, keeper: SessionKeeper) {
        AccountClient.make(config, account, store: store, logsIn: logsIn, commandLine: true, logger: logger(config, label: "matrix"))
    }

    /// Now, as the session's times count it: milliseconds since 1970.
    static func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}
