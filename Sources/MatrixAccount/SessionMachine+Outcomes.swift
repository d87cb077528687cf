import IsthmusCommon
import MatrixClient

/// What the keeper's I/O did: the vault read, the refresh, the login, the write. An outcome that does not fit the
/// state (a late answer) changes nothing.
extension SessionMachine {
    /// The vault holds `stored` for the account (nil: nothing).
    public mutating func vaultRead(_ stored: MatrixSession?, now: Int64) -> [Action] {
        let stored = stored?.userID == configuration.userID ? stored : nil
        switch state {
        case .loading(let after):
            if let stored, stored.accessToken != after?.kept?.accessToken { return hold(stored, now: now) }
            guard let after else { return logIn(replacing: nil, reason: .noSession, now: now) }
            state = .stalled(after, recheckAt: now + configuration.recheckDelay)
            return [.fail(.stalled(after.stall))]
        case .renewing(var renewal):
            guard case .readingVault(let refreshToken) = renewal.step else { return [] }
            if let stored, let old = renewal.old, stored.accessToken != old.accessToken {
                return hold(stored, now: now)   // renewed by another process: refreshing ours now would be refused
            }
            renewal.step = .refreshing(refreshToken)
            state = .renewing(renewal)
            return [.refresh(refreshToken)]
        default:
            return []
        }
    }

    /// The vault could not be read.
    public mutating func vaultFailed(_ reason: String, now: Int64) -> [Action] {
        switch state {
        case .loading(let after):
            if let after {
                state = .stalled(after, recheckAt: now + configuration.recheckDelay)
                return [.fail(.stalled(after.stall))]
            }
            state = .unloaded
            return [.fail(.store(reason))]
        case .renewing(var renewal):
            guard case .readingVault(let refreshToken) = renewal.step else { return [] }
            renewal.step = .refreshing(refreshToken)   // the read only looked for a session renewed elsewhere
            state = .renewing(renewal)
            return [.refresh(refreshToken)]
        default:
            return []
        }
    }

    /// `POST /refresh` answered.
    public mutating func refreshed(_ answer: RefreshResponse, now: Int64) -> [Action] {
        guard case .renewing(var renewal) = state, case .refreshing = renewal.step, let old = renewal.old else { return [] }
        let next = old.refreshed(by: answer, now: now)
        renewal.step = .storing(next)
        state = .renewing(renewal)
        return [.store(next)]
    }

    /// `POST /refresh` failed. Unanswered: the session stays as it was, to be refreshed again with the same token.
    /// Refused (4xx): the homeserver ended the session.
    public mutating func refreshFailed(_ failure: CallFailure, now: Int64) -> [Action] {
        guard case .renewing(let renewal) = state, case .refreshing = renewal.step, var old = renewal.old else { return [] }
        switch failure {
        case .unanswered(let reason):
            if renewal.oldUsable {
                state = .holding(Held(session: old, refreshDue: now + configuration.retryDelay, refusedSoftly: nil))
                return []
            }
            state = .holding(Held(session: old, refreshDue: now, refusedSoftly: false))
            return [.fail(.unanswered(reason))]
        case .refused(_, _, let softLogout, _):
            old.refreshToken = nil   // never traded again
            return logIn(replacing: old, reason: softLogout ? .softLogout : .loggedOut, now: now)
        }
    }

    /// `POST /login` answered.
    public mutating func loggedIn(_ answer: LoginResponse, now: Int64) -> [Action] {
        guard case .renewing(var renewal) = state, case .loggingIn = renewal.step else { return [] }
        guard answer.userID == configuration.userID else { return stall(.otherAccount(answer.userID), kept: renewal.old, now: now) }
        let next = MatrixSession(login: answer, requested: renewal.old?.deviceID ?? configuration.deviceID, now: now)
        renewal.step = .storing(next)
        state = .renewing(renewal)
        return [.store(next)]
    }

    /// `POST /login` failed. Unanswered: the next call tries again. Refused: the operator must act.
    public mutating func loginFailed(_ failure: CallFailure, now: Int64) -> [Action] {
        guard case .renewing(let renewal) = state, case .loggingIn(let reason) = renewal.step else { return [] }
        switch failure {
        case .unanswered(let why):
            state = renewal.old.map { .holding(Held(session: $0, refreshDue: nil, refusedSoftly: reason == .softLogout)) } ?? .unloaded
            return [.fail(.unanswered(why))]
        case .refused(_, let errcode, _, let message):
            return stall(.loginRefused(errcode, message), kept: renewal.old, now: now)
        }
    }

    /// The new session is durable: it is used from now on.
    public mutating func stored(now: Int64) -> [Action] {
        guard case .renewing(let renewal) = state, case .storing(let next) = renewal.step else { return [] }
        return hold(next, now: now)
    }

    /// The new session could not be written, so it is not used: the old one stays (its refresh token still valid, as
    /// the new pair was never used), or there is none.
    public mutating func storeFailed(_ reason: String, now: Int64) -> [Action] {
        guard case .renewing(let renewal) = state, case .storing = renewal.step else { return [] }
        if let old = renewal.old {
            state = .holding(renewal.oldUsable
                ? Held(session: old, refreshDue: now + configuration.retryDelay, refusedSoftly: nil)
                : Held(session: old, refreshDue: now, refusedSoftly: false))
        } else {
            state = .unloaded
        }
        return [.fail(.store(reason))]
    }
}
