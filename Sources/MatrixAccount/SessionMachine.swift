import IsthmusCommon
import MatrixClient

/// The account's session as a value: which token calls use, when it is refreshed, when the account logs in again and
/// when only the operator can help (client-server API §"Client authentication": "Refreshing access tokens", "Soft
/// logout"). Free of I/O and clocks: ``SessionKeeper`` feeds it events with the wall-clock time in milliseconds and
/// performs the ``Action``s it returns; what an action did comes back as the next event.
///
/// - A token is refreshed before use once 80 % of its lifetime has passed (of what was left when the session was taken
///   up, for one read from the store), and whenever the homeserver refuses it (401 `M_UNKNOWN_TOKEN`).
/// - Before refreshing, the vault is read: a session another process renewed (the CLI, the other member of a pair) is
///   taken up instead, since refreshing a superseded refresh token makes the homeserver refuse it.
/// - A renewed session is written to the vault before anyone uses it. A refresh that got no answer leaves the session
///   as it was: the next try trades the same refresh token (the homeserver keeps it valid until the new pair is used).
/// - A refused refresh ends the session: with a password the account logs in again on the same device (after a soft
///   logout, or when the homeserver ended it); without one the machine stalls until the operator runs `isthmus login`
///   (it looks in the vault for that new session every ``Configuration/recheckDelay``).
/// - Calls that arrive during a renewal wait for it (one refresh for all) — unless it is an early refresh of a token that
///   still works, which they go on using.
public struct SessionMachine: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// `matrix.client.user_id`: a kept session of another account is not used.
        public var userID: UserID
        /// The device of a first login (the configured one, else one generated once); later logins keep the session's.
        public var deviceID: DeviceID
        /// Whether the machine may log in with the password by itself (there is one, and this is not `logout`).
        public var canLogIn: Bool
        /// The share of an access token's lifetime after which it is refreshed before use.
        public var refreshShare = 0.8
        /// How long after an early refresh that got no answer the next one is tried (milliseconds).
        public var retryDelay: Int64 = 5_000
        /// How often a stalled machine looks in the vault for a session the operator made (milliseconds).
        public var recheckDelay: Int64 = 10_000

        public init(userID: UserID, deviceID: DeviceID, canLogIn: Bool) {
            self.userID = userID
            self.deviceID = deviceID
            self.canLogIn = canLogIn
        }
    }

    /// A session calls use.
    public struct Held: Sendable, Equatable {
        public var session: MatrixSession
        /// When to refresh ahead of expiry (ms since 1970); nil: never (no expiry, or no refresh token).
        public var refreshDue: Int64?
        /// Nil until the homeserver refuses the token; then what its `soft_logout` said. A refused token is not handed out.
        public var refusedSoftly: Bool?
    }

    /// A renewal under way: the steps of a refresh (read the vault, refresh, store) or of a login (log in, store).
    public struct Renewal: Sendable, Equatable {
        public enum Step: Sendable, Equatable {
            case readingVault(RefreshToken)
            case refreshing(RefreshToken)
            case loggingIn(LoginReason)
            /// Writing the new session: it is handed out once durable.
            case storing(MatrixSession)
        }

        /// The session being renewed; nil for a first login.
        public var old: MatrixSession?
        /// Calls go on with the old token meanwhile (an early refresh of a token that still works).
        public var oldUsable: Bool
        public var step: Step
    }

    /// A stall and the session it left, as a vault read looking for the operator's new session remembers them.
    public struct Stalled: Sendable, Equatable {
        public var stall: SessionStall
        /// The session whose device a new login keeps, and which a vault read must not mistake for a new one.
        public var kept: MatrixSession?
    }

    public enum State: Sendable, Equatable {
        /// Nothing read yet: the first token asked for reads the vault.
        case unloaded
        /// Reading the vault: at the start (nil), or looking for the session the operator made after a stall.
        case loading(after: Stalled?)
        case holding(Held)
        case renewing(Renewal)
        /// Cannot go on alone until the operator acts; the vault is read again from `recheckAt` on.
        case stalled(Stalled, recheckAt: Int64)
    }

    /// One I/O step for ``SessionKeeper``, or a hand-over to the calls waiting for a token.
    public enum Action: Sendable, Equatable {
        /// Every call waiting for a token goes on with this one.
        case hand(AccessToken)
        /// Every call waiting for a token fails.
        case fail(SessionFailure)
        /// Read the session the vault keeps for the account → ``vaultRead(_:now:)`` or ``vaultFailed(_:now:)``.
        case readVault
        /// `POST /refresh` with this token → ``refreshed(_:now:)`` or ``refreshFailed(_:now:)``.
        case refresh(RefreshToken)
        /// `POST /login` with the password on this device, asking for a refresh token → ``loggedIn(_:now:)`` or
        /// ``loginFailed(_:now:)``.
        case logIn(DeviceID, LoginReason)
        /// Write the session to the vault, durably → ``stored(now:)`` or ``storeFailed(_:now:)``.
        case store(MatrixSession)
        /// Delete the account's session from the vault: the homeserver ended it for good.
        case forget
        /// Tell the operator, once per stall (log, `/ready`).
        case tellOperator(SessionStall)
    }

    public let configuration: Configuration
    public internal(set) var state: State = .unloaded

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// A call wants a token now.
    public mutating func tokenWanted(now: Int64) -> [Action] {
        switch state {
        case .unloaded:
            state = .loading(after: nil)
            return [.readVault]
        case .loading:
            return []
        case .holding(let held):
            let session = held.session
            if held.refusedSoftly == nil, !Self.isExpired(session, now: now) {
                guard let due = held.refreshDue, now >= due else { return [.hand(session.accessToken)] }
                return [.hand(session.accessToken)] + renew(session, usable: true, softly: false, now: now)
            }
            // Synapse refuses an expired token with soft_logout: true; a refusal said what it said.
            return renew(session, usable: false, softly: held.refusedSoftly ?? true, now: now)
        case .renewing(let renewal):
            guard renewal.oldUsable, let old = renewal.old else { return [] }
            return [.hand(old.accessToken)]
        case .stalled(let stalled, let recheckAt):
            guard now >= recheckAt else { return [.fail(.stalled(stalled.stall))] }
            state = .loading(after: stalled)
            return [.readVault]
        }
    }

    /// The homeserver refused a token with 401 `M_UNKNOWN_TOKEN`.
    public mutating func rejected(_ rejection: TokenRejection, now: Int64) -> [Action] {
        switch state {
        case .holding(var held) where held.session.accessToken == rejection.token:
            held.refusedSoftly = rejection.softLogout
            state = .holding(held)
        case .renewing(var renewal) where renewal.oldUsable && renewal.old?.accessToken == rejection.token:
            renewal.oldUsable = false
            state = .renewing(renewal)
        default:
            break   // a token already replaced: the current one is handed out (or waited for)
        }
        return tokenWanted(now: now)
    }

    // MARK: Shared steps

    /// Renews `session`: a refresh when it has a refresh token (reading the vault first), else a login.
    mutating func renew(_ session: MatrixSession, usable: Bool, softly: Bool, now: Int64) -> [Action] {
        if let refreshToken = session.refreshToken {
            state = .renewing(Renewal(old: session, oldUsable: usable, step: .readingVault(refreshToken)))
            return [.readVault]
        }
        return logIn(replacing: session, reason: softly ? .softLogout : .loggedOut, now: now)
    }

    /// Logs in with the password when the machine may — never in place of an OAuth 2.0 session, which only its
    /// authorization server renews; else stalls (forgetting a session the homeserver ended).
    mutating func logIn(replacing old: MatrixSession?, reason: LoginReason, now: Int64) -> [Action] {
        guard configuration.canLogIn, old?.authAPI != .oauth else {
            switch reason {
            case .noSession: return stall(.noSession, kept: old, now: now)
            case .softLogout: return stall(.softLoggedOut, kept: old, now: now)
            case .loggedOut: return (old == nil ? [] : [.forget]) + stall(.loggedOut, kept: nil, now: now)
            }
        }
        state = .renewing(Renewal(old: old, oldUsable: false, step: .loggingIn(reason)))
        return [.logIn(old?.deviceID ?? configuration.deviceID, reason)]
    }

    /// Stops until the operator acts.
    mutating func stall(_ stall: SessionStall, kept: MatrixSession?, now: Int64) -> [Action] {
        state = .stalled(Stalled(stall: stall, kept: kept), recheckAt: now + configuration.recheckDelay)
        return [.tellOperator(stall), .fail(.stalled(stall))]
    }

    /// Takes `session` up and hands its token out (or renews it first when it is already due).
    mutating func hold(_ session: MatrixSession, now: Int64) -> [Action] {
        var due: Int64?
        if session.refreshToken != nil, let expiresAt = session.expiresAt {
            due = now + Int64(Double(max(0, expiresAt - now)) * configuration.refreshShare)
        }
        state = .holding(Held(session: session, refreshDue: due, refusedSoftly: nil))
        return tokenWanted(now: now)
    }

    static func isExpired(_ session: MatrixSession, now: Int64) -> Bool {
        session.expiresAt.map { now >= $0 } ?? false
    }
}
