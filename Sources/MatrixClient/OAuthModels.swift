import FoundationEssentials
import IsthmusCommon

/// The homeserver's OAuth 2.0 authorization server (`GET /_matrix/client/v1/auth_metadata`, RFC 8414; "next-generation
/// auth", spec v1.15): where logins, refreshes and revocations happen, and which grants it takes. Pure value.
public struct AuthMetadata: Sendable, Equatable, Decodable {
    public var issuer: String
    public var authorizationEndpoint: String?
    public var tokenEndpoint: String?
    public var revocationEndpoint: String?
    public var registrationEndpoint: String?
    /// Where the device authorization grant (RFC 8628) starts, when the server offers it.
    public var deviceAuthorizationEndpoint: String?
    public var grantTypesSupported: [String]?
    public var codeChallengeMethodsSupported: [String]?
    /// Where a user manages their account (MSC4191).
    public var accountManagementURI: String?

    public init(issuer: String, authorizationEndpoint: String? = nil, tokenEndpoint: String? = nil, revocationEndpoint: String? = nil,
                registrationEndpoint: String? = nil, deviceAuthorizationEndpoint: String? = nil, grantTypesSupported: [String]? = nil,
                codeChallengeMethodsSupported: [String]? = nil, accountManagementURI: String? = nil) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.registrationEndpoint = registrationEndpoint
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.grantTypesSupported = grantTypesSupported
        self.codeChallengeMethodsSupported = codeChallengeMethodsSupported
        self.accountManagementURI = accountManagementURI
    }

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case registrationEndpoint = "registration_endpoint"
        case deviceAuthorizationEndpoint = "device_authorization_endpoint"
        case grantTypesSupported = "grant_types_supported"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case accountManagementURI = "account_management_uri"
    }

    /// Whether the device authorization grant can be used: its endpoint is named, and the grant is listed (or no list
    /// is given).
    public var offersDeviceGrant: Bool {
        deviceAuthorizationEndpoint != nil && (grantTypesSupported?.contains(OAuthGrantType.deviceCode) ?? true)
    }

    /// Whether the authorization code grant with PKCE S256 can be used.
    public var offersAuthorizationCode: Bool {
        authorizationEndpoint != nil && (grantTypesSupported?.contains(OAuthGrantType.authorizationCode) ?? true)
            && (codeChallengeMethodsSupported?.contains("S256") ?? false)
    }

    /// `url` as an endpoint the bridge may send credentials to: https, or http on a loopback host (a local test
    /// server); nil otherwise (RFC 8414 §2 requires TLS).
    public static func usableEndpoint(_ url: String?) -> String? {
        guard let url, let parsed = URL(string: url), parsed.user == nil, let scheme = parsed.scheme?.lowercased(),
              let host = parsed.host?.lowercased(), !host.isEmpty else { return nil }
        if scheme == "https" { return url }
        return scheme == "http" && ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host) ? url : nil
    }
}

/// The OAuth 2.0 grant types Isthmus uses (RFC 6749 §4.1 and §6, RFC 8628 §3.4).
public enum OAuthGrantType {
    public static let authorizationCode = "authorization_code"
    public static let refreshToken = "refresh_token"
    public static let deviceCode = "urn:ietf:params:oauth:grant-type:device_code"
}

/// The scope of a Matrix session under OAuth 2.0 (client-server API §"Scope"): the whole client-server API, on the
/// device the client chose.
public enum OAuthScope {
    public static func matrix(device: DeviceID) -> String {
        "urn:matrix:client:api:* urn:matrix:client:device:\(device.rawValue)"
    }
}

/// What Isthmus registers itself as (RFC 7591 §2): a public native client that may use the device grant, the
/// authorization code grant with a loopback redirect, and refresh tokens.
public struct OAuthClientMetadata: Sendable, Equatable, Encodable {
    public var clientName = "Isthmus"
    public var clientURI: String
    public var applicationType = "native"
    public var grantTypes = [OAuthGrantType.authorizationCode, OAuthGrantType.refreshToken, OAuthGrantType.deviceCode]
    public var responseTypes = ["code"]
    public var redirectURIs: [String]
    public var tokenEndpointAuthMethod = "none"

    public init(clientURI: String, redirectURIs: [String]) {
        self.clientURI = clientURI
        self.redirectURIs = redirectURIs
    }

    enum CodingKeys: String, CodingKey {
        case clientName = "client_name"
        case clientURI = "client_uri"
        case applicationType = "application_type"
        case grantTypes = "grant_types"
        case responseTypes = "response_types"
        case redirectURIs = "redirect_uris"
        case tokenEndpointAuthMethod = "token_endpoint_auth_method"
    }
}

/// The device authorization endpoint's answer (RFC 8628 §3.2).
public struct DeviceAuthorization: Sendable, Equatable, Decodable {
    public var deviceCode: String
    public var userCode: String
    public var verificationURI: String
    public var verificationURIComplete: String?
    /// Seconds the codes stay valid.
    public var expiresIn: Int
    /// Seconds between polls (default 5).
    public var interval: Int?

    public init(deviceCode: String, userCode: String, verificationURI: String, verificationURIComplete: String? = nil,
                expiresIn: Int, interval: Int? = nil) {
        self.deviceCode = deviceCode
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.expiresIn = expiresIn
        self.interval = interval
    }

    enum CodingKeys: String, CodingKey {
        case deviceCode = "device_code"
        case userCode = "user_code"
        case verificationURI = "verification_uri"
        case verificationURIComplete = "verification_uri_complete"
        case expiresIn = "expires_in"
        case interval
    }
}

/// The token endpoint's answer (RFC 6749 §5.1).
public struct OAuthTokenResponse: Sendable, Equatable, Decodable {
    public var accessToken: AccessToken
    public var refreshToken: RefreshToken?
    /// Seconds the access token lasts; absent: unknown (treated as not expiring).
    public var expiresIn: Int64?

    public init(accessToken: AccessToken, refreshToken: RefreshToken? = nil, expiresIn: Int64? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
    }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case refreshToken = "refresh_token"
        case expiresIn = "expires_in"
    }

    /// The same as a client-server API refresh answer, which the session machine takes.
    public var asRefresh: RefreshResponse {
        RefreshResponse(accessToken: accessToken, refreshToken: refreshToken, expiresInMilliseconds: expiresIn.map { $0 * 1000 })
    }
}

/// The `error` of a token endpoint's refusal (RFC 6749 §5.2, RFC 8628 §3.5).
public enum OAuthErrorCode: String, Sendable, Equatable {
    case authorizationPending = "authorization_pending"
    case slowDown = "slow_down"
    case accessDenied = "access_denied"
    case expiredToken = "expired_token"
    case invalidGrant = "invalid_grant"
    case invalidClient = "invalid_client"
    case invalidRequest = "invalid_request"
    case invalidScope = "invalid_scope"
    case unauthorizedClient = "unauthorized_client"
    case unsupportedGrantType = "unsupported_grant_type"
}

/// An OAuth 2.0 endpoint's refusal body (RFC 6749 §5.2).
struct OAuthErrorBody: Decodable {
    var error: String
    var errorDescription: String?

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
    }
}
