import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import MatrixAccount
import MatrixClient

/// Matrix client mode's account, as `serve` and the one-shot commands reach it: its ``SessionKeeper`` over the session
/// the store keeps, and a ``MatrixClient`` whose calls carry the keeper's tokens. Builds objects only; no I/O.
public enum AccountClient {
    /// `logsIn`: a missing or ended session logs in with the configured password (on the configured device, else one
    /// generated now and kept with the session). `commandLine`: short timeouts and retries (someone is waiting).
    /// `metrics`: `serve`'s — the session's refreshes, logins and stalls, rate-limit waits, and `/ready`'s stall reason.
    public static func make(_ config: Config, _ account: Config.MatrixAccount, store: Store, logsIn: Bool = true,
                            commandLine: Bool = false, logger: Logger,
                            metrics: BridgeMetrics? = nil) -> (client: MatrixClient, keeper: SessionKeeper) {
        var observer: (@Sendable (SessionEvent) -> Void)?
        if let metrics { observer = { event in AccountClient.observe(event, metrics) } }
        let keeper = SessionKeeper(
            configuration: .init(userID: account.userID, deviceID: account.deviceID ?? .generated(), canLogIn: logsIn),
            password: account.password, client: plainClient(config, commandLine: commandLine, logger: logger),
            vault: StoreSessionVault(store: store), logger: logger.with(label: "matrix.session"), observer: observer)
        var configuration = configuration(config, commandLine: commandLine)
        if let metrics { configuration.onRateLimitWait = { _, _ in metrics.rateLimitWaited() } }
        let client = MatrixClient(configuration: configuration, tokens: keeper, logger: logger.with(label: "matrix.client"))
        return (client, keeper)
    }

    /// A session event in the metrics and `/ready`.
    static func observe(_ event: SessionEvent, _ metrics: BridgeMetrics) {
        switch event {
        case .refreshed: metrics.matrixSessionEvent("refreshed")
        case .loggedIn(let reason):
            metrics.matrixSessionEvent("logged_in")
            if reason == .softLogout { metrics.matrixSessionEvent("soft_logout") }
        case .stalled(let stall):
            metrics.matrixSessionEvent("stalled")
            if stall == .softLoggedOut { metrics.matrixSessionEvent("soft_logout") }
            metrics.health.setMatrixAccountStall(stall.description)
        case .recovered: metrics.health.setMatrixAccountStall(nil)
        }
    }

    /// A client for the account's own login and refresh calls: no token.
    public static func plainClient(_ config: Config, commandLine: Bool, logger: Logger) -> MatrixClient {
        MatrixClient(configuration: configuration(config, commandLine: commandLine), logger: logger.with(label: "matrix.client"))
    }

    private static func configuration(_ config: Config, commandLine: Bool) -> MatrixClient.Configuration {
        commandLine
            ? .init(homeserverURL: config.matrix.homeserverURL, accessToken: "", requestTimeout: .seconds(15), retryPolicy: RetryPolicy(maxAttempts: 2))
            : .init(homeserverURL: config.matrix.homeserverURL, accessToken: "", maxConnectionsPerHost: 32)
    }
}
