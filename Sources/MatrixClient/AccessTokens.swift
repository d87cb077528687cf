import IsthmusCommon

/// Where a ``MatrixClient`` takes its access token from when it can change under it: an ordinary account's session,
/// whose token is refreshed or replaced by a new login (`MatrixAccount`'s `SessionKeeper`). The appservice's as_token
/// never changes and needs none (``MatrixClient/Configuration/accessToken``, read without a call).
///
/// The client asks ``current()`` before each attempt of an authenticated call. When the homeserver refuses the token
/// with 401 `M_UNKNOWN_TOKEN` it asks ``renewed(after:)`` once and sends the call again; a second refusal fails the call.
public protocol AccessTokens: Sendable {
    /// The token to send now. May first renew one that is due (the source decides when); throws a ``MatrixError``
    /// when there is none to send (kind ``MatrixError/Kind/unusable`` when only the operator can help).
    func current() async throws(MatrixError) -> AccessToken
    /// A token to use instead of the one the homeserver just refused. Calls that arrive while a renewal is under way
    /// share it (one refresh for all); a refusal of a token already replaced gets the replacement at once.
    func renewed(after rejection: TokenRejection) async throws(MatrixError) -> AccessToken
}

/// The homeserver's refusal of an access token: 401 `M_UNKNOWN_TOKEN` (client-server API §"Using access tokens").
public struct TokenRejection: Sendable, Equatable {
    /// The token that was refused.
    public var token: AccessToken
    /// The answer's `soft_logout`: the session can be taken up again on the same device (§"Soft logout").
    public var softLogout: Bool

    public init(token: AccessToken, softLogout: Bool) {
        self.token = token
        self.softLogout = softLogout
    }
}
