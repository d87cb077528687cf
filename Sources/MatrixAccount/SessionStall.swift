import IsthmusCommon
import Matrix

/// Why the account's session cannot go on without the operator. Nothing is dropped meanwhile: calls fail and the
/// bridge keeps what it has to send until a session exists again (`isthmus login`, which a running bridge picks up).
public enum SessionStall: Sendable, Equatable, CustomStringConvertible {
    /// No session is kept and no password is configured.
    case noSession
    /// The homeserver ended the session softly (`soft_logout`) and there is no password to log in again with: a
    /// session from SSO.
    case softLoggedOut
    /// The homeserver ended the session (a refresh was refused) and there is no password to log in again with.
    case loggedOut
    /// The homeserver refused the password login (`M_FORBIDDEN`: a wrong password; `M_USER_DEACTIVATED`…).
    case loginRefused(MatrixErrorCode?, String)
    /// The login answered for another account than the configured one.
    case otherAccount(UserID)

    /// What happened and what the operator does about it, in one line.
    public var description: String {
        switch self {
        case .noSession:
            "no Matrix session is stored and no password is configured: run `isthmus login` (--password-stdin, --sso or --oauth), "
                + "or set matrix.client.password or ISTHMUS_MATRIX_PASSWORD"
        case .softLoggedOut:
            "the homeserver ended the Matrix session (soft logout) and no password is configured to log in again: "
                + "run `isthmus login --sso` (the same device is kept)"
        case .loggedOut:
            "the homeserver ended the Matrix session and no password is configured to log in again (or it was an OAuth 2.0 "
                + "session, which a password cannot renew): run `isthmus login` (--oauth for OAuth 2.0)"
        case .loginRefused(let errcode, let message):
            "the homeserver refused the password login (\(errcode.map { "\($0) " } ?? "")\(message)): "
                + "check matrix.client.password (or ISTHMUS_MATRIX_PASSWORD) and the account"
        case .otherAccount(let user):
            "the login answered for \(user), not the configured matrix.client.user_id"
        }
    }
}

/// Why a login was started.
public enum LoginReason: Sendable, Equatable {
    /// No session was kept.
    case noSession
    /// The homeserver ended the session softly: the same device logs in again.
    case softLogout
    /// The homeserver ended the session and would not refresh it.
    case loggedOut
}

/// Why a call's token could not be had this time.
public enum SessionFailure: Sendable, Equatable, CustomStringConvertible {
    /// Only the operator can help (see ``SessionStall``).
    case stalled(SessionStall)
    /// The homeserver did not answer a refresh or a login (network, timeout, 5xx, rate limits): the next call tries again
    /// — a refresh with the same refresh token.
    case unanswered(String)
    /// The store could not be read, or a renewed session not written to it (which is then not used: the old refresh
    /// token still works).
    case store(String)

    public var description: String {
        switch self {
        case .stalled(let stall): stall.description
        case .unanswered(let reason): "the homeserver did not renew the Matrix session: \(reason)"
        case .store(let reason): "the Matrix session could not be read from or written to the store: \(reason)"
        }
    }
}

/// How a refresh or a login call failed, as the session machine tells them apart.
public enum CallFailure: Sendable, Equatable {
    /// No usable answer: network, timeout, 5xx, rate limits beyond the waits. Try again later.
    case unanswered(String)
    /// A 4xx answer: the homeserver refused (`softLogout` as its body said).
    case refused(status: Int, errcode: MatrixErrorCode?, softLogout: Bool, message: String)
}

/// What a ``SessionKeeper`` tells its observer.
public enum SessionEvent: Sendable, Equatable {
    /// The access token was refreshed.
    case refreshed
    /// The account logged in (again), for this reason.
    case loggedIn(LoginReason)
    /// The session needs the operator; calls fail until it is fixed.
    case stalled(SessionStall)
    /// A session works again after a stall.
    case recovered
}
