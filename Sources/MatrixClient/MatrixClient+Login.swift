import FoundationEssentials
import IsthmusCommon
import Matrix

/// An ordinary account's session: the login types offered, logging in, refreshing, logging out, whom a token belongs
/// to, and whether the homeserver moved to OAuth 2.0 (client-server API §"Client authentication"). Login and refresh
/// send no access token and are not sent twice after a lost answer (the caller decides: a refresh is repeated with the
/// same refresh token, a login must not leave a device behind unnoticed).
extension MatrixClient {
    /// `GET /_matrix/client/v3/login`: the login types the homeserver offers. A 404 `M_UNRECOGNIZED` means it no longer
    /// offers the legacy login API at all (OAuth 2.0 only). No auth needed.
    public func loginFlows() async throws(MatrixError) -> LoginFlows {
        var request = ClientRequest(.loginFlows, "GET", ["_matrix/client/v3/login"])
        request.authenticated = false
        return try await perform(request)
    }

    /// `POST /_matrix/client/v3/login`. With ``LoginRequest/refreshToken`` the answer carries a refresh token and the
    /// access token's lifetime (when the homeserver supports them). A wrong password is 403 `M_FORBIDDEN`; a
    /// deactivated account 403 `M_USER_DEACTIVATED`.
    public func login(_ login: LoginRequest) async throws(MatrixError) -> LoginResponse {
        struct Identifier: Encodable {
            var type = "m.id.user"
            var user: String
        }
        struct Body: Encodable {
            var type: String
            var identifier: Identifier?
            var password: String?
            var token: String?
            var deviceID: DeviceID?
            var initialDeviceDisplayName: String?
            var refreshToken: Bool?
            enum CodingKeys: String, CodingKey {
                case type, identifier, password, token
                case deviceID = "device_id"
                case initialDeviceDisplayName = "initial_device_display_name"
                case refreshToken = "refresh_token"
            }
        }
        var body = Body(type: LoginType.password, deviceID: login.deviceID, initialDeviceDisplayName: login.initialDeviceDisplayName,
                        refreshToken: login.refreshToken ? true : nil)
        switch login.credential {
        case .password(let user, let password):
            body.identifier = Identifier(user: user)
            body.password = password
        case .token(let token):
            body.type = LoginType.token
            body.token = token
        }
        var request = ClientRequest(.login, "POST", ["_matrix/client/v3/login"], body: try json(body, call: .login), retry: .rateLimitOnly)
        request.authenticated = false
        return try await perform(request)
    }

    /// Logs in with a password on a new device, without a refresh token: for tests and benchmarks.
    public func login(user: String, password: String, deviceDisplayName: String? = nil) async throws(MatrixError) -> LoginResponse {
        try await login(LoginRequest(.password(user: user, password: password), initialDeviceDisplayName: deviceDisplayName))
    }

    /// `POST /_matrix/client/v3/refresh`: trades `token` for a new access token (and usually a new refresh token). The
    /// old refresh token stays valid until the new pair is used, so after a lost answer the same call may be made
    /// again; a refresh token already superseded is refused (Synapse: 403 `M_FORBIDDEN`; an unknown one 401
    /// `M_UNKNOWN_TOKEN`, which may say `soft_logout`).
    public func refresh(_ token: RefreshToken) async throws(MatrixError) -> RefreshResponse {
        struct Body: Encodable {
            var refreshToken: RefreshToken
            enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
        }
        var request = ClientRequest(.refresh, "POST", ["_matrix/client/v3/refresh"], body: try json(Body(refreshToken: token), call: .refresh),
                                    retry: .rateLimitOnly)
        request.authenticated = false
        return try await perform(request)
    }

    /// `POST /_matrix/client/v3/logout`: ends the token's session and deletes its device (and the device's keys).
    public func logout() async throws(MatrixError) {
        let _: Bodies.Empty = try await perform(ClientRequest(.logout, "POST", ["_matrix/client/v3/logout"], body: Data("{}".utf8),
                                                              retry: .rateLimitOnly))
    }

    /// `GET /_matrix/client/v3/account/whoami` for the token's own user: the user and the token's device.
    public func tokenOwner() async throws(MatrixError) -> TokenOwner {
        try await perform(ClientRequest(.tokenOwner, "GET", ["_matrix/client/v3/account/whoami"]))
    }

    /// `GET /_matrix/client/v1/auth_metadata`: the OAuth 2.0 authorization server the homeserver delegates logins to
    /// ("next-generation auth", MSC2965, spec v1.15), or nil when it answers 404 (it has none: the legacy API is its
    /// login). No auth needed.
    public func authMetadata() async throws(MatrixError) -> AuthMetadata? {
        var request = ClientRequest(.authMetadata, "GET", ["_matrix/client/v1/auth_metadata"])
        request.authenticated = false
        do {
            return try await perform(request)
        } catch where error.status == 404 {
            return nil
        }
    }
}
