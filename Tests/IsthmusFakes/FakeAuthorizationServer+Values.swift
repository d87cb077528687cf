import Foundation
import IsthmusCommon

extension FakeAuthorizationServer {
    /// A requested scope that names a Matrix session (client-server API §"Scope"): the whole API,
    /// `urn:matrix:client:api:*`, and exactly one device, `urn:matrix:client:device:<id>` with an id of at least 10
    /// characters of `[A-Za-z0-9-._~]`. Other scope tokens are kept but grant nothing. Pure value.
    struct MatrixScope: Sendable {
        static let api = "urn:matrix:client:api:*"
        static let devicePrefix = "urn:matrix:client:device:"

        /// The scope as requested, and as granted.
        var text: String
        var deviceID: DeviceID

        /// Validates a `scope` parameter; a refusal is `invalid_scope` (RFC 6749 §5.2).
        init(_ text: String?) throws(Refusal) {
            let tokens = (text ?? "").split(separator: " ").map(String.init)
            guard tokens.contains(Self.api) else { throw Refusal(.invalidScope, "scope must include \(Self.api)") }
            let devices = tokens.filter { $0.hasPrefix(Self.devicePrefix) }.map { $0.dropFirst(Self.devicePrefix.count) }
            guard devices.count == 1, let device = DeviceID(String(devices[0])), device.isOAuthCompatible else {
                throw Refusal(.invalidScope, "scope must name exactly one device of 10 or more [A-Za-z0-9-._~]")
            }
            self.text = tokens.joined(separator: " ")
            deviceID = device
        }
    }

    /// A redirect URI a native client may register (client-server API §"Client registration", RFC 8252 §7): http on a
    /// loopback host, or a private-use scheme in reverse-DNS form; never with a fragment. Pure value.
    struct RedirectURI: Sendable {
        static let loopbackHosts: Set<String> = ["127.0.0.1", "localhost", "[::1]", "::1"]

        var text: String
        var isLoopback: Bool

        /// Validates a registered URI; a refusal is `invalid_redirect_uri` (RFC 7591 §3.2.2).
        init(registering text: String) throws(Refusal) {
            guard let parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased(), parts.fragment == nil else {
                throw Refusal(.invalidRedirectURI, "\(text) is not a URI without a fragment")
            }
            isLoopback = scheme == "http" && Self.loopbackHosts.contains(parts.host?.lowercased() ?? "")
            guard isLoopback || (scheme != "http" && scheme != "https" && scheme.contains(".")) else {
                throw Refusal(.invalidRedirectURI, "\(text) is neither loopback http nor a private-use scheme")
            }
            self.text = text
        }

        /// Whether an authorization request may redirect to `requested`: the same URI, except that a loopback URI may
        /// use any port (RFC 8252 §7.3).
        func accepts(_ requested: String) -> Bool {
            guard requested != text else { return true }
            guard isLoopback, let wanted = URLComponents(string: requested), let registered = URLComponents(string: text),
                  wanted.fragment == nil, wanted.user == nil, wanted.password == nil else { return false }
            return wanted.scheme?.lowercased() == registered.scheme?.lowercased()
                && wanted.host?.lowercased() == registered.host?.lowercased()
                && wanted.percentEncodedPath == registered.percentEncodedPath
                && wanted.percentEncodedQuery == registered.percentEncodedQuery
        }
    }

    /// Proof Key for Code Exchange with S256 (RFC 7636). Pure functions.
    enum Pkce {
        /// BASE64URL-ENCODE(SHA256(ASCII(verifier))), without padding (§4.2).
        static func challenge(_ verifier: String) -> String {
            Data(Digest.sha256(Array(verifier.utf8))).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }

        /// Whether `text` has a verifier's (or an S256 challenge's) shape: 43–128 unreserved characters (§4.1).
        static func isVerifier(_ text: String) -> Bool {
            (43...128).contains(text.unicodeScalars.count) && text.unicodeScalars.allSatisfy(DeviceID.isOAuthCharacter)
        }
    }

    /// The client metadata of a registration (RFC 7591 §2), echoed in its answer with the new `client_id` (§3.2.1).
    struct ClientMetadata: Sendable, Codable {
        var clientID: String?
        var clientName: String?
        var clientURI: String?
        var applicationType: String?
        var grantTypes: [String]?
        var responseTypes: [String]?
        var redirectURIs: [String]?
        var tokenEndpointAuthMethod: String?
        var logoURI: String?
        var policyURI: String?
        var tosURI: String?

        enum CodingKeys: String, CodingKey {
            case clientID = "client_id", clientName = "client_name", clientURI = "client_uri"
            case applicationType = "application_type", grantTypes = "grant_types", responseTypes = "response_types"
            case redirectURIs = "redirect_uris", tokenEndpointAuthMethod = "token_endpoint_auth_method"
            case logoURI = "logo_uri", policyURI = "policy_uri", tosURI = "tos_uri"
        }

        /// The client this metadata may register, as the Matrix spec asks (client-server API §"Client registration"):
        /// an https `client_uri`, the code and refresh grants, a public client, valid redirect URIs.
        func validated() throws(Refusal) -> Client {
            guard let clientURI, let parts = URLComponents(string: clientURI), parts.scheme?.lowercased() == "https",
                  !(parts.host ?? "").isEmpty, parts.user == nil else {
                throw Refusal(.invalidClientMetadata, "client_uri must be an https URL")
            }
            let grants = Set(grantTypes ?? [GrantType.authorizationCode])
            guard grants.isSuperset(of: [GrantType.authorizationCode, GrantType.refreshToken]) else {
                throw Refusal(.invalidClientMetadata, "grant_types must include authorization_code and refresh_token")
            }
            guard responseTypes?.contains("code") ?? true else { throw Refusal(.invalidClientMetadata, "response_types must include code") }
            guard tokenEndpointAuthMethod == "none" else {
                throw Refusal(.invalidClientMetadata, "token_endpoint_auth_method must be none (public clients only)")
            }
            var uris: [RedirectURI] = []
            for text in redirectURIs ?? [] { uris.append(try RedirectURI(registering: text)) }
            return Client(redirectURIs: uris, grantTypes: grants)
        }
    }

    /// The parameters of `GET /oauth2/authorize` (RFC 6749 §4.1.1, RFC 7636 §4.3), already percent-decoded.
    struct AuthorizationRequest: Sendable {
        var responseType: String?
        var clientID: String?
        var redirectURI: String?
        var scope: String?
        var state: String?
        var codeChallenge: String?
        var codeChallengeMethod: String?
        var responseMode: String?

        init(_ parameters: [String: String]) {
            responseType = parameters["response_type"]
            clientID = parameters["client_id"]
            redirectURI = parameters["redirect_uri"]
            scope = parameters["scope"]
            state = parameters["state"]
            codeChallenge = parameters["code_challenge"]
            codeChallengeMethod = parameters["code_challenge_method"]
            responseMode = parameters["response_mode"]
        }

        /// `redirectURI` with `parameters` and `state` added in the query, or in the fragment with `response_mode=fragment`.
        func location(_ redirectURI: String, _ parameters: [String: String]) -> String {
            var all = parameters
            all["state"] = state
            let encoded = all.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.escaped($0.value))" }.joined(separator: "&")
            if responseMode == "fragment" { return redirectURI + "#" + encoded }
            return redirectURI + (redirectURI.contains("?") ? "&" : "?") + encoded
        }

        /// `text` percent-encoded but for RFC 3986's unreserved characters.
        static func escaped(_ text: String) -> String {
            text.utf8.map { byte in
                let scalar = Unicode.Scalar(byte)
                return byte < 0x80 && DeviceID.isOAuthCharacter(scalar) ? String(scalar) : "%" + Digest.hex([byte]).uppercased()
            }.joined()
        }
    }

    /// Where an authorization request ends: a redirect back to the client, or a refusal shown to the user.
    enum AuthorizationOutcome: Sendable {
        case redirect(String)
        case refused(Refusal)
    }

    /// `GET /_matrix/client/versions`'s answer (client-server API §"Versions"): a server with OAuth 2.0 APIs.
    struct Versions: Sendable, Encodable {
        var versions = ["v1.15", "v1.16", "v1.17", "v1.18"]
    }

    /// The authorization server metadata (RFC 8414 §2) the fake publishes.
    struct Metadata: Sendable, Encodable {
        var issuer: String
        var authorizationEndpoint: String
        var tokenEndpoint: String
        var revocationEndpoint: String
        var registrationEndpoint: String
        var deviceAuthorizationEndpoint: String?
        var responseTypesSupported = ["code"]
        var responseModesSupported = ["query", "fragment"]
        var grantTypesSupported: [String]
        var codeChallengeMethodsSupported = ["S256"]

        enum CodingKeys: String, CodingKey {
            case issuer, authorizationEndpoint = "authorization_endpoint", tokenEndpoint = "token_endpoint"
            case revocationEndpoint = "revocation_endpoint", registrationEndpoint = "registration_endpoint"
            case deviceAuthorizationEndpoint = "device_authorization_endpoint"
            case responseTypesSupported = "response_types_supported", responseModesSupported = "response_modes_supported"
            case grantTypesSupported = "grant_types_supported", codeChallengeMethodsSupported = "code_challenge_methods_supported"
        }
    }

    /// The device authorization answer (RFC 8628 §3.2).
    struct DeviceAnswer: Sendable, Encodable {
        var deviceCode: String
        var userCode: String
        var verificationURI: String
        var verificationURIComplete: String
        var expiresIn: Int
        var interval: Int

        enum CodingKeys: String, CodingKey {
            case deviceCode = "device_code", userCode = "user_code", verificationURI = "verification_uri"
            case verificationURIComplete = "verification_uri_complete", expiresIn = "expires_in", interval
        }
    }

    /// `whoami`'s answer.
    struct WhoAmI: Sendable, Encodable {
        var userID: String
        var deviceID: String
        enum CodingKeys: String, CodingKey { case userID = "user_id", deviceID = "device_id" }
    }

    /// An OAuth 2.0 error body (RFC 6749 §5.2).
    struct OAuthErrorBody: Sendable, Encodable {
        var error: String
        var errorDescription: String
        enum CodingKeys: String, CodingKey { case error, errorDescription = "error_description" }
    }

    /// A Matrix error body, with `soft_logout` on `M_UNKNOWN_TOKEN`.
    struct MatrixErrorBody: Sendable, Encodable {
        var errcode: String
        var error: String
        var softLogout: Bool?
        enum CodingKeys: String, CodingKey { case errcode, error, softLogout = "soft_logout" }
    }

    /// `{}`.
    struct Empty: Sendable, Encodable {}
}
