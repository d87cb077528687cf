import Foundation
import IsthmusCommon

extension FakeAuthorizationServer {
    /// The grant types the fake knows (RFC 6749 §4.1.3 and §6, RFC 8628 §3.4).
    public enum GrantType {
        public static let authorizationCode = "authorization_code"
        public static let refreshToken = "refresh_token"
        public static let deviceCode = "urn:ietf:params:oauth:grant-type:device_code"
    }

    /// An OAuth 2.0 `error` code (RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2, RFC 8628 §3.5).
    enum ErrorCode: String, Sendable {
        case invalidRequest = "invalid_request"
        case invalidClient = "invalid_client"
        case invalidGrant = "invalid_grant"
        case invalidScope = "invalid_scope"
        case unauthorizedClient = "unauthorized_client"
        case unsupportedGrantType = "unsupported_grant_type"
        case unsupportedResponseType = "unsupported_response_type"
        case invalidClientMetadata = "invalid_client_metadata"
        case invalidRedirectURI = "invalid_redirect_uri"
        case authorizationPending = "authorization_pending"
        case slowDown = "slow_down"
        case accessDenied = "access_denied"
        case expiredToken = "expired_token"
    }

    /// A refused request: the HTTP status, the OAuth error code and a sentence for people. Pure value.
    struct Refusal: Error, Sendable {
        var status: Int
        var code: ErrorCode
        var description: String

        init(_ code: ErrorCode, _ description: String, status: Int = 400) {
            self.status = status
            self.code = code
            self.description = description
        }
    }

    /// What the fake was configured with. Pure value.
    struct Settings: Sendable {
        var userID: String
        var accessTokenLifetime: Int
        var offersDeviceGrant: Bool
        var interval: Int
        var slowDownIncrement: Int
        /// Seconds a device code stays valid (`expires_in`, RFC 8628 §3.2).
        var deviceCodeLifetime = 600
    }

    /// A registered public client (RFC 7591).
    struct Client: Sendable {
        var redirectURIs: [RedirectURI]
        var grantTypes: Set<String>
    }

    /// Where a device authorization stands (RFC 8628 §3.5).
    enum DeviceGrantStatus: Sendable { case pending, approved, denied, expired, consumed }

    /// One device authorization (RFC 8628 §3.2): its codes, its client and scope, how it is polled.
    struct DeviceGrant: Sendable {
        var userCode: String
        var clientID: String
        var scope: MatrixScope
        var expiresAt: ContinuousClock.Instant
        /// Seconds the client must wait between polls; grows by the slow-down increment at each `slow_down`.
        var interval: Int
        var lastPoll: ContinuousClock.Instant?
        var status = DeviceGrantStatus.pending
    }

    /// An authorization code handed out by `/oauth2/authorize` (RFC 6749 §4.1.2), with its PKCE challenge (RFC 7636 §4.3).
    struct AuthorizationCode: Sendable {
        var clientID: String
        var redirectURI: String
        var challenge: String
        var scope: MatrixScope
        var used = false
    }

    /// A signed-in device: its current token pair and the refresh tokens it rotated away.
    struct Session: Sendable {
        var clientID: String
        var scope: MatrixScope
        var accessToken: String
        var accessExpiresAt: ContinuousClock.Instant
        var refreshToken: String
        var revoked = false
    }

    /// What a token of a session is worth to the client-server API (`whoami`).
    enum TokenStanding: Sendable, Equatable {
        case live(deviceID: DeviceID)
        /// Issued and unrevoked, but its lifetime has passed (a refresh would save the session: soft logout).
        case expired
        case unknown
    }

    /// Everything the fake remembers, behind its `Mutex`. Mutating methods are the protocol logic: free of sockets, the
    /// time passed in; they only draw random codes and tokens.
    struct State: Sendable {
        var clients: [String: Client] = [:]
        var deviceGrants: [String: DeviceGrant] = [:]
        var codes: [String: AuthorizationCode] = [:]
        var sessions: [Session] = []
        /// Every access and refresh token ever issued, to the index of its session.
        var accessOwners: [String: Int] = [:]
        var refreshOwners: [String: Int] = [:]
        var tokenRequests: [String: Int] = [:]
        var lastScope: String?

        /// Records a client and returns its new id.
        mutating func register(_ client: Client) -> String {
            let id = "client_" + Digest.randomHex(bytes: 12)
            clients[id] = client
            return id
        }

        /// Starts a device authorization (RFC 8628 §3.1) and returns its device code.
        mutating func startDeviceGrant(clientID: String, scope: String?, settings: Settings,
                                       now: ContinuousClock.Instant) throws(Refusal) -> (deviceCode: String, grant: DeviceGrant) {
            guard let client = clients[clientID] else { throw Refusal(.invalidClient, "unknown client_id") }
            guard client.grantTypes.contains(GrantType.deviceCode) else {
                throw Refusal(.unauthorizedClient, "the client did not register the device code grant")
            }
            let grant = DeviceGrant(userCode: Self.userCode(), clientID: clientID, scope: try MatrixScope(scope),
                                    expiresAt: now + .seconds(settings.deviceCodeLifetime), interval: settings.interval)
            let deviceCode = "dc_" + Digest.randomHex(bytes: 16)
            deviceGrants[deviceCode] = grant
            return (deviceCode, grant)
        }

        /// Sets the status of the pending device authorization with `userCode` (compared without case or dashes,
        /// RFC 8628 §6.1); false when there is none.
        mutating func decide(userCode: String, _ status: DeviceGrantStatus) -> Bool {
            let wanted = Self.normalized(userCode)
            guard let code = deviceGrants.first(where: { Self.normalized($0.value.userCode) == wanted && $0.value.status == .pending })?.key
            else { return false }
            deviceGrants[code]?.status = status
            return true
        }

        /// A poll of the token endpoint with the device code grant (RFC 8628 §3.4–3.5).
        mutating func pollDevice(deviceCode: String?, clientID: String, settings: Settings,
                                 now: ContinuousClock.Instant) throws(Refusal) -> Tokens {
            guard let deviceCode, var grant = deviceGrants[deviceCode], grant.clientID == clientID else {
                throw Refusal(.invalidGrant, "unknown device_code")
            }
            defer { deviceGrants[deviceCode] = grant }
            if grant.status == .pending, now >= grant.expiresAt { grant.status = .expired }
            switch grant.status {
            case .pending:
                let previous = grant.lastPoll
                grant.lastPoll = now
                if let previous, now - previous < .seconds(grant.interval) {
                    grant.interval += settings.slowDownIncrement
                    throw Refusal(.slowDown, "polled sooner than the interval; it is now \(grant.interval) s")
                }
                throw Refusal(.authorizationPending, "the user has not answered yet")
            case .denied: throw Refusal(.accessDenied, "the user refused")
            case .expired: throw Refusal(.expiredToken, "the device code expired")
            case .consumed: throw Refusal(.invalidGrant, "the device code was already used")
            case .approved:
                grant.status = .consumed
                return issue(clientID: clientID, scope: grant.scope, settings: settings, now: now)
            }
        }

        /// Trades an authorization code, checking PKCE S256 (RFC 7636 §4.6) and the redirect URI (RFC 6749 §4.1.3).
        mutating func exchange(code: String?, redirectURI: String?, verifier: String?, clientID: String, settings: Settings,
                               now: ContinuousClock.Instant) throws(Refusal) -> Tokens {
            guard let code, let grant = codes[code], grant.clientID == clientID, !grant.used else {
                throw Refusal(.invalidGrant, "unknown or used code")
            }
            codes[code]?.used = true
            guard redirectURI == grant.redirectURI else {
                throw Refusal(.invalidGrant, "redirect_uri differs from the authorization request's")
            }
            guard let verifier, Pkce.isVerifier(verifier), Pkce.challenge(verifier) == grant.challenge else {
                throw Refusal(.invalidGrant, "code_verifier does not match the code_challenge")
            }
            return issue(clientID: clientID, scope: grant.scope, settings: settings, now: now)
        }

        /// Rotates a session's tokens (RFC 6749 §6). The old access token dies at once. A refresh token that was already
        /// rotated away revokes its whole session (OAuth 2.0 Security BCP, RFC 9700 §4.14.2; the Matrix spec's SHOULD).
        mutating func refresh(token: String?, clientID: String, settings: Settings,
                              now: ContinuousClock.Instant) throws(Refusal) -> Tokens {
            guard let token, let index = refreshOwners[token], sessions[index].clientID == clientID, !sessions[index].revoked else {
                throw Refusal(.invalidGrant, "unknown or revoked refresh_token")
            }
            guard sessions[index].refreshToken == token else {
                sessions[index].revoked = true
                throw Refusal(.invalidGrant, "refresh_token already used: the session is revoked")
            }
            let tokens = Tokens.fresh(scope: sessions[index].scope, lifetime: settings.accessTokenLifetime)
            sessions[index].accessToken = tokens.accessToken
            sessions[index].refreshToken = tokens.refreshToken
            sessions[index].accessExpiresAt = now + .seconds(settings.accessTokenLifetime)
            accessOwners[tokens.accessToken] = index
            refreshOwners[tokens.refreshToken] = index
            return tokens
        }

        /// Revokes the session `token` (an access or a refresh token) belongs to (RFC 7009 §2.1); unknown tokens are
        /// ignored (§2.2), another client's are refused.
        mutating func revoke(token: String, clientID: String) throws(Refusal) {
            guard let index = accessOwners[token] ?? refreshOwners[token] else { return }
            guard sessions[index].clientID == clientID else { throw Refusal(.unauthorizedClient, "the token belongs to another client") }
            sessions[index].revoked = true
        }

        /// An authorization request, answered as if the user signed in and consented at once (RFC 6749 §4.1.1–4.1.2,
        /// RFC 7636 §4.4). A bad client or redirect URI is refused without redirecting (§4.1.2.1); other errors redirect.
        mutating func authorize(_ request: AuthorizationRequest) -> AuthorizationOutcome {
            guard let clientID = request.clientID, let client = clients[clientID] else {
                return .refused(Refusal(.invalidClient, "unknown client_id"))
            }
            guard let redirectURI = request.redirectURI, client.redirectURIs.contains(where: { $0.accepts(redirectURI) }) else {
                return .refused(Refusal(.invalidRequest, "redirect_uri is not one the client registered"))
            }
            do throws(Refusal) {
                guard request.responseType == "code" else { throw Refusal(.unsupportedResponseType, "response_type must be code") }
                guard [nil, "query", "fragment"].contains(request.responseMode) else {
                    throw Refusal(.invalidRequest, "unknown response_mode")
                }
                guard request.state != nil else { throw Refusal(.invalidRequest, "state is required") }
                guard request.codeChallengeMethod == "S256", let challenge = request.codeChallenge, Pkce.isVerifier(challenge) else {
                    throw Refusal(.invalidRequest, "PKCE with code_challenge_method S256 is required")
                }
                let scope = try MatrixScope(request.scope)
                let code = "code_" + Digest.randomHex(bytes: 16)
                codes[code] = AuthorizationCode(clientID: clientID, redirectURI: redirectURI, challenge: challenge, scope: scope)
                return .redirect(request.location(redirectURI, ["code": code]))
            } catch {
                return .redirect(request.location(redirectURI, ["error": error.code.rawValue, "error_description": error.description]))
            }
        }

        /// What `accessToken` is worth at `now`.
        func standing(ofAccessToken accessToken: String, now: ContinuousClock.Instant) -> TokenStanding {
            guard let index = accessOwners[accessToken] else { return .unknown }
            let session = sessions[index]
            guard !session.revoked, session.accessToken == accessToken else { return .unknown }
            return now < session.accessExpiresAt ? .live(deviceID: session.scope.deviceID) : .expired
        }

        /// Opens a session with a new token pair.
        private mutating func issue(clientID: String, scope: MatrixScope, settings: Settings, now: ContinuousClock.Instant) -> Tokens {
            let tokens = Tokens.fresh(scope: scope, lifetime: settings.accessTokenLifetime)
            sessions.append(Session(clientID: clientID, scope: scope, accessToken: tokens.accessToken,
                                    accessExpiresAt: now + .seconds(settings.accessTokenLifetime), refreshToken: tokens.refreshToken))
            accessOwners[tokens.accessToken] = sessions.count - 1
            refreshOwners[tokens.refreshToken] = sessions.count - 1
            lastScope = scope.text
            return tokens
        }

        /// Eight consonants as `XXXX-XXXX` (RFC 8628 §6.1: no vowels, no look-alikes).
        static func userCode() -> String {
            let letters = Array("BCDFGHJKLMNPQRSTVWXZ")
            let picked = String((0..<8).map { _ in letters.randomElement()! })
            return picked.prefix(4) + "-" + picked.suffix(4)
        }

        /// A user code as typed, reduced to compare: upper case, no dashes or spaces.
        static func normalized(_ userCode: String) -> String {
            userCode.uppercased().filter { $0 != "-" && $0 != " " }
        }
    }

    /// A successful token answer (RFC 6749 §5.1).
    struct Tokens: Sendable, Encodable {
        var accessToken: String
        var tokenType = "Bearer"
        var expiresIn: Int
        var refreshToken: String
        var scope: String

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token", tokenType = "token_type", expiresIn = "expires_in"
            case refreshToken = "refresh_token", scope
        }

        /// A new random pair (MAS's `mat_`/`mar_` prefixes).
        static func fresh(scope: MatrixScope, lifetime: Int) -> Tokens {
            Tokens(accessToken: "mat_" + Digest.randomHex(bytes: 16), expiresIn: lifetime,
                   refreshToken: "mar_" + Digest.randomHex(bytes: 16), scope: scope.text)
        }
    }
}
