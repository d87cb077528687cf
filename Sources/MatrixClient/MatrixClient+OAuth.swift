import FoundationEssentials
import IsthmusCommon

/// OAuth 2.0 — "next-generation auth" (client-server API §"OAuth 2.0 API", spec v1.15 and v1.18): registering the
/// bridge as a client (RFC 7591), the device authorization grant (RFC 8628), the token endpoint for every grant
/// (RFC 6749), and revocation (RFC 7009). The endpoints are the authorization server's, named by ``AuthMetadata``;
/// each must be https or loopback (``AuthMetadata/usableEndpoint(_:)``). None sends an access token, and none is sent
/// twice after a lost answer: the caller decides (a refresh is repeated with the same refresh token, a device-code poll
/// simply polls again).
extension MatrixClient {
    /// `POST registration_endpoint` with the client's metadata: the `client_id` the server gave (201).
    public func registerOAuthClient(at endpoint: String, _ metadata: OAuthClientMetadata) async throws(MatrixError) -> String {
        struct Registered: Decodable {
            var clientID: String
            enum CodingKeys: String, CodingKey { case clientID = "client_id" }
        }
        var request = ClientRequest(.oauthRegistration, "POST", [], body: try json(metadata, call: .oauthRegistration), retry: .rateLimitOnly)
        request.absoluteURL = try usable(endpoint, .oauthRegistration)
        request.authenticated = false
        let registered: Registered = try await perform(request)
        return registered.clientID
    }

    /// `POST device_authorization_endpoint`: a device code for `clientID` and `scope`, and the user code a person
    /// enters at the verification URI.
    public func authorizeDevice(at endpoint: String, clientID: String, scope: String) async throws(MatrixError) -> DeviceAuthorization {
        try await perform(ClientRequest(.oauthDeviceAuthorization, formTo: try usable(endpoint, .oauthDeviceAuthorization),
                                        [("client_id", clientID), ("scope", scope)]))
    }

    /// A grant at the token endpoint.
    public enum OAuthGrant: Sendable {
        /// Polling for the device code's tokens (RFC 8628 §3.4); refusals `authorization_pending`, `slow_down`,
        /// `access_denied`, `expired_token` (``MatrixError/oauthError``).
        case deviceCode(String)
        /// The code the authorization endpoint redirected to `redirectURI` with, and the PKCE verifier (RFC 7636).
        case authorizationCode(code: String, redirectURI: String, verifier: String)
        /// A refresh (RFC 6749 §6); the server may rotate the refresh token.
        case refreshToken(RefreshToken)

        var fields: [(String, String)] {
            switch self {
            case .deviceCode(let code):
                [("grant_type", OAuthGrantType.deviceCode), ("device_code", code)]
            case .authorizationCode(let code, let redirectURI, let verifier):
                [("grant_type", OAuthGrantType.authorizationCode), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", verifier)]
            case .refreshToken(let token):
                [("grant_type", OAuthGrantType.refreshToken), ("refresh_token", token.secret)]
            }
        }
    }

    /// `POST token_endpoint` with `grant` for `clientID`.
    public func requestToken(at endpoint: String, _ grant: OAuthGrant, clientID: String) async throws(MatrixError) -> OAuthTokenResponse {
        try await perform(ClientRequest(.oauthToken, formTo: try usable(endpoint, .oauthToken), grant.fields + [("client_id", clientID)]))
    }

    /// `POST revocation_endpoint`: revokes `token` (the server ends the whole session: its access and refresh token).
    public func revoke(at endpoint: String, accessToken token: AccessToken, clientID: String) async throws(MatrixError) {
        let _: Bodies.Empty = try await perform(ClientRequest(
            .oauthRevocation, formTo: try usable(endpoint, .oauthRevocation),
            [("token", token.secret), ("token_type_hint", "access_token"), ("client_id", clientID)]))
    }

    private func usable(_ endpoint: String, _ call: MatrixCall) throws(MatrixError) -> String {
        guard let url = AuthMetadata.usableEndpoint(endpoint) else {
            throw MatrixError(kind: .unusable, call: call, endpoint: endpoint,
                              message: "the authorization server's endpoint \(endpoint) is neither https nor on loopback", attempts: 0)
        }
        return url
    }
}
