import IsthmusCommon
import MatrixClient

/// Which auth API minted a session. A session keeps using the API that minted it: the two are exclusive per session
/// (client-server API §"Client authentication"). Stored by its raw value.
public enum AuthAPI: String, Sendable, Equatable, CaseIterable {
    /// The client-server API's own `/login` and `/refresh` (a password, or SSO's login token).
    case legacy
    /// OAuth 2.0, "next-generation auth" (spec v1.15): the authorization server's token endpoint refreshes.
    case oauth
}

/// The account's session as a login or a refresh minted it, and as the store keeps it. Pure value; its tokens print as
/// fingerprints only (``BearerToken``).
public struct MatrixSession: Sendable, Equatable {
    public var userID: UserID
    public var deviceID: DeviceID
    public var accessToken: AccessToken
    /// Nil: the access token cannot be refreshed (a login without `refresh_token: true`, or a homeserver without them).
    public var refreshToken: RefreshToken?
    /// When the access token expires, in milliseconds since 1970 by the wall clock; nil: it does not.
    public var expiresAt: Int64?
    public var authAPI: AuthAPI
    /// Under OAuth 2.0: the client id the authorization server registered the bridge as (its refreshes and the
    /// revocation at logout name it).
    public var oauthClientID: String?

    public init(userID: UserID, deviceID: DeviceID, accessToken: AccessToken, refreshToken: RefreshToken? = nil,
                expiresAt: Int64? = nil, authAPI: AuthAPI = .legacy, oauthClientID: String? = nil) {
        self.oauthClientID = oauthClientID
        self.userID = userID
        self.deviceID = deviceID
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.authAPI = authAPI
    }

    /// The session a legacy login at `now` minted; on `requested` unless the answer names the device.
    public init(login: LoginResponse, requested: DeviceID, now: Int64) {
        self.init(userID: login.userID, deviceID: login.deviceID ?? requested, accessToken: login.accessToken,
                  refreshToken: login.refreshToken, expiresAt: login.expiresInMilliseconds.map { now + $0 })
    }

    /// The session an OAuth 2.0 grant at `now` minted for `userID` (whom `/account/whoami` named) on `deviceID` (the one
    /// its scope asked for), registered as `clientID`.
    public init(oauth answer: OAuthTokenResponse, userID: UserID, deviceID: DeviceID, clientID: String, now: Int64) {
        self.init(userID: userID, deviceID: deviceID, accessToken: answer.accessToken, refreshToken: answer.refreshToken,
                  expiresAt: answer.expiresIn.map { now + $0 * 1000 }, authAPI: .oauth, oauthClientID: clientID)
    }

    /// This session after a refresh at `now`: the new access token and its expiry, and the new refresh token — or the
    /// one just traded, when the answer has none (§"Refreshing access tokens": then it stays the one to use).
    public func refreshed(by answer: RefreshResponse, now: Int64) -> MatrixSession {
        var next = self
        next.accessToken = answer.accessToken
        next.refreshToken = answer.refreshToken ?? refreshToken
        next.expiresAt = answer.expiresInMilliseconds.map { now + $0 }
        return next
    }
}
