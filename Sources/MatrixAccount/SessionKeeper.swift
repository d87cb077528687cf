import FoundationEssentials
import IsthmusCommon
import MatrixClient

/// The account's session, kept: the token source of the ``MatrixClient`` that acts as the account. Performs the
/// ``SessionMachine``'s actions — vault reads and writes, `/refresh`, `/login` with the password — and nothing else.
///
/// The call that sets off a renewal performs its steps itself; calls arriving meanwhile wait until it hands them the new
/// token (or its failure), so concurrent calls share one refresh. Nothing is read before the first token is asked for.
/// One actor per account; does network and store I/O.
public actor SessionKeeper: AccessTokens {
    /// The name a device gets at its first login (shown in the account's device list).
    public static let deviceDisplayName = "Isthmus bridge"

    private var machine: SessionMachine
    private var waiters: [CheckedContinuation<Result<AccessToken, MatrixError>, Never>] = []
    private let password: String?
    /// Makes the login and refresh calls (which carry no access token).
    private let client: MatrixClient
    private let vault: any SessionVault
    private let time: TimeSource
    private let logger: Logger
    /// The stall the operator was told of, until a session works again (for `/ready` and `doctor`).
    public private(set) var stall: SessionStall?
    /// The authorization server's token endpoint, once an OAuth 2.0 session was refreshed.
    private var oauthTokenEndpoint: String?
    /// Told of each renewal, login and stall as it happens (the bridge's metrics and `/ready`); called on the actor.
    private let observer: (@Sendable (SessionEvent) -> Void)?

    /// `configuration.canLogIn` is honoured only with a `password`. `client` is one without ``AccessTokens`` (the
    /// keeper's own calls must not wait for the keeper).
    public init(configuration: SessionMachine.Configuration, password: String?, client: MatrixClient, vault: any SessionVault,
                time: TimeSource = .system, logger: Logger, observer: (@Sendable (SessionEvent) -> Void)? = nil) {
        self.observer = observer
        var configuration = configuration
        configuration.canLogIn = configuration.canLogIn && password != nil
        machine = SessionMachine(configuration: configuration)
        self.password = password
        self.client = client
        self.vault = vault
        self.time = time
        self.logger = logger
    }

    /// The session calls use now; nil before the first call, during a first login and after a stall.
    public var session: MatrixSession? {
        switch machine.state {
        case .holding(let held): held.session
        case .renewing(let renewal): renewal.old
        case .unloaded, .loading, .stalled: nil
        }
    }

    public func current() async throws(MatrixError) -> AccessToken {
        try await obtain { $0.tokenWanted(now: $1) }
    }

    public func renewed(after rejection: TokenRejection) async throws(MatrixError) -> AccessToken {
        try await obtain { $0.rejected(rejection, now: $1) }
    }

    /// Feeds `event`, performs what it sets off, and returns the token it settles — or waits for the renewal another
    /// call is performing.
    private func obtain(_ event: (inout SessionMachine, Int64) -> [SessionMachine.Action]) async throws(MatrixError) -> AccessToken {
        var actions = event(&machine, now())
        while true {
            if actions.isEmpty {
                return try await withCheckedContinuation { waiters.append($0) }.get()
            }
            if let settled = await run(actions) { return try settled.get() }
            actions = machine.tokenWanted(now: now())   // a chain that settled nothing: ask again
        }
    }

    /// Performs `actions` and those their outcomes lead to, in order; returns the first token handed or failure.
    private func run(_ actions: [SessionMachine.Action]) async -> Result<AccessToken, MatrixError>? {
        var pending = actions[...]
        var settled: Result<AccessToken, MatrixError>?
        while let action = pending.popFirst() {
            switch action {
            case .hand(let token):
                if stall != nil { observer?(.recovered) }
                stall = nil
                settle(.success(token), &settled)
            case .fail(let failure):
                settle(.failure(Self.error(failure)), &settled)
            case .readVault:
                do {
                    let stored = try await vault.session(of: machine.configuration.userID)
                    pending += machine.vaultRead(stored, now: now())
                } catch {
                    pending += machine.vaultFailed("\(error)", now: now())
                }
            case .refresh(let token):
                do {
                    let answer = try await refresh(token)
                    logger.debug("Refreshed the Matrix access token", metadata: ["matrix.user": "\(machine.configuration.userID)"])
                    observer?(.refreshed)
                    pending += machine.refreshed(answer, now: now())
                } catch {
                    logger.info("Could not refresh the Matrix access token", metadata: ["error": error.description])
                    pending += machine.refreshFailed(Self.failure(error), now: now())
                }
            case .logIn(let device, let reason):
                logger.info(reason == .noSession ? "Logging in to Matrix" : "Logging in to Matrix again", metadata: [
                    "matrix.user": "\(machine.configuration.userID)", "matrix.device": "\(device)", "matrix.login.reason": "\(reason)"])
                let request = LoginRequest(.password(user: machine.configuration.userID.rawValue, password: password ?? ""),
                                           deviceID: device, initialDeviceDisplayName: Self.deviceDisplayName, refreshToken: true)
                do {
                    pending += machine.loggedIn(try await client.login(request), now: now())
                    observer?(.loggedIn(reason))
                } catch {
                    pending += machine.loginFailed(Self.failure(error), now: now())
                }
            case .store(let session):
                do {
                    try await vault.keep(session)
                    pending += machine.stored(now: now())
                } catch {
                    logger.warning("Could not store the renewed Matrix session; it is not used", metadata: ["error": "\(error)"])
                    pending += machine.storeFailed("\(error)", now: now())
                }
            case .forget:
                do {
                    try await vault.forget(machine.configuration.userID)
                } catch {
                    logger.warning("Could not delete the ended Matrix session from the store", metadata: ["error": "\(error)"])
                }
            case .tellOperator(let stall):
                self.stall = stall
                observer?(.stalled(stall))
                logger.error("The Matrix session needs the operator", metadata: [
                    "matrix.user": "\(machine.configuration.userID)", "matrix.session.stall": stall.description])
            }
        }
        return settled
    }

    /// Trades `token` where the session was minted: the client-server API's `/refresh`, or under OAuth 2.0 the
    /// authorization server's token endpoint (found through the homeserver's `auth_metadata` once, then remembered).
    private func refresh(_ token: RefreshToken) async throws(MatrixError) -> RefreshResponse {
        guard let session, session.authAPI == .oauth else { return try await client.refresh(token) }
        guard let clientID = session.oauthClientID else {
            throw MatrixError(kind: .homeserver, call: .refresh, endpoint: "OAuth 2.0 token endpoint", status: 400,
                              message: "the stored OAuth 2.0 session names no client id", attempts: 0)
        }
        if oauthTokenEndpoint == nil {
            guard let endpoint = try await client.authMetadata()?.tokenEndpoint else {
                throw MatrixError(kind: .invalidResponse, call: .authMetadata, endpoint: "GET /_matrix/client/v1/auth_metadata",
                                  message: "the homeserver names no OAuth 2.0 token endpoint", attempts: 1)
            }
            oauthTokenEndpoint = endpoint
        }
        return try await client.requestToken(at: oauthTokenEndpoint ?? "", .refreshToken(token), clientID: clientID).asRefresh
    }

    /// Hands `result` to every waiting call, and to the performing one unless it has its answer already.
    private func settle(_ result: Result<AccessToken, MatrixError>, _ settled: inout Result<AccessToken, MatrixError>?) {
        if settled == nil { settled = result }
        let waiting = waiters
        waiters = []
        for waiter in waiting { waiter.resume(returning: result) }
    }

    private func now() -> Int64 {
        Int64((time.wallNow().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// How a login or refresh call failed, as the machine tells them apart: a 4xx answer (but 429) is a refusal.
    static func failure(_ error: MatrixError) -> CallFailure {
        if error.kind == .homeserver, let status = error.status, (400..<500).contains(status), status != 429 {
            return .refused(status: status, errcode: error.errcode, softLogout: error.softLogout, message: error.message)
        }
        return .unanswered(error.description)
    }

    /// The error a call that wanted a token fails with: ``MatrixError/Kind/unusable`` when only the operator can help.
    static func error(_ failure: SessionFailure) -> MatrixError {
        let kind: MatrixError.Kind = if case .stalled = failure { .unusable } else { .transport }
        return MatrixError(kind: kind, call: .accessToken, endpoint: "the account's session", message: failure.description, attempts: 1)
    }
}
