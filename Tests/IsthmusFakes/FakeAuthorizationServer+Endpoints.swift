import Foundation
import IsthmusCommon
import MatrixAppService

extension FakeAuthorizationServer {
    /// The paths the fake serves (the issuer's endpoints sit on the homeserver's own base URL).
    enum Path {
        static let versions = "/_matrix/client/versions"
        static let authMetadata = "/_matrix/client/v1/auth_metadata"
        static let login = "/_matrix/client/v3/login"
        static let whoami = "/_matrix/client/v3/account/whoami"
        static let authorize = "/oauth2/authorize"
        static let token = "/oauth2/token"
        static let revoke = "/oauth2/revoke"
        static let registration = "/oauth2/registration"
        static let device = "/oauth2/device"
        static let link = "/link"
    }

    /// Answers one request. Called from ``run()``'s loop; touches only the state behind the `Mutex`, no I/O.
    func answer(_ request: HTTPServerRequest) -> HTTPServerResponse {
        switch (request.method, request.path) {
        case ("GET", Path.versions): Self.json(200, Versions())
        case ("GET", Path.authMetadata): Self.json(200, metadata)
        case (_, Path.login): Self.matrixError(404, errcode: "M_UNRECOGNIZED", "Login is delegated to OAuth 2.0: see auth_metadata")
        case ("POST", Path.registration): register(request)
        case ("POST", Path.device) where settings.offersDeviceGrant: startDeviceGrant(request)
        case ("POST", Path.token): token(request)
        case ("GET", Path.authorize): authorize(request)
        case ("POST", Path.revoke): revoke(request)
        case ("GET", Path.whoami): whoami(request)
        default: Self.matrixError(404, errcode: "M_UNRECOGNIZED", "Unrecognized request")
        }
    }

    /// The authorization server metadata (RFC 8414 §2; client-server API `GET /auth_metadata`).
    var metadata: Metadata {
        let base = url.absoluteString
        var grants = [GrantType.authorizationCode, GrantType.refreshToken]
        if settings.offersDeviceGrant { grants.append(GrantType.deviceCode) }
        return Metadata(issuer: base + "/", authorizationEndpoint: base + Path.authorize, tokenEndpoint: base + Path.token,
                        revocationEndpoint: base + Path.revoke, registrationEndpoint: base + Path.registration,
                        deviceAuthorizationEndpoint: settings.offersDeviceGrant ? base + Path.device : nil, grantTypesSupported: grants)
    }

    /// `POST /oauth2/registration` (RFC 7591 §3): registers a public client; 201 with its id and metadata.
    func register(_ request: HTTPServerRequest) -> HTTPServerResponse {
        do throws(Refusal) {
            guard var metadata = try? JSONDecoder().decode(ClientMetadata.self, from: request.body) else {
                throw Refusal(.invalidClientMetadata, "the body is not client metadata in JSON")
            }
            let client = try metadata.validated()
            metadata.clientID = state.withLock { $0.register(client) }
            return Self.json(201, metadata)
        } catch {
            return Self.oauthError(error)
        }
    }

    /// `POST /oauth2/device` (RFC 8628 §3.1–3.2): starts a device authorization.
    func startDeviceGrant(_ request: HTTPServerRequest) -> HTTPServerResponse {
        do throws(Refusal) {
            let form = try Self.form(request)
            let now = time.now()
            let (deviceCode, grant) = try state.withLock { state throws(Refusal) in
                try state.startDeviceGrant(clientID: form["client_id"] ?? "", scope: form["scope"], settings: settings, now: now)
            }
            let link = url.absoluteString + Path.link
            return Self.json(200, DeviceAnswer(deviceCode: deviceCode, userCode: grant.userCode, verificationURI: link,
                                               verificationURIComplete: link + "?code=" + grant.userCode,
                                               expiresIn: settings.deviceCodeLifetime, interval: grant.interval), noStore: true)
        } catch {
            return Self.oauthError(error)
        }
    }

    /// `POST /oauth2/token` (RFC 6749 §4.1.3 and §6, RFC 8628 §3.4): every grant; counts the requests by grant type.
    func token(_ request: HTTPServerRequest) -> HTTPServerResponse {
        do throws(Refusal) {
            let form = try Self.form(request)
            let grantType = form["grant_type"] ?? ""
            let now = time.now(), known = metadata.grantTypesSupported
            let tokens = try state.withLock { state throws(Refusal) -> Tokens in
                state.tokenRequests[grantType, default: 0] += 1
                guard let clientID = form["client_id"], let client = state.clients[clientID] else {
                    throw Refusal(.invalidClient, "unknown client_id", status: 401)
                }
                guard known.contains(grantType) else { throw Refusal(.unsupportedGrantType, "unsupported grant_type") }
                guard client.grantTypes.contains(grantType) else { throw Refusal(.unauthorizedClient, "grant_type not registered") }
                switch grantType {
                case GrantType.deviceCode:
                    return try state.pollDevice(deviceCode: form["device_code"], clientID: clientID, settings: settings, now: now)
                case GrantType.authorizationCode:
                    return try state.exchange(code: form["code"], redirectURI: form["redirect_uri"], verifier: form["code_verifier"],
                                              clientID: clientID, settings: settings, now: now)
                default:
                    return try state.refresh(token: form["refresh_token"], clientID: clientID, settings: settings, now: now)
                }
            }
            return Self.json(200, tokens, noStore: true)
        } catch {
            return Self.oauthError(error)
        }
    }

    /// `GET /oauth2/authorize` (RFC 6749 §4.1.1): the user "signs in and consents" at once; 302 back to the client.
    func authorize(_ request: HTTPServerRequest) -> HTTPServerResponse {
        do throws(Refusal) {
            // The server hands the query over still percent-encoded; it is form-encoded (RFC 6749 §4.1.1).
            let pairs = request.query.map { $0.name + ($0.value.map { "=" + $0 } ?? "") }
            let parameters = try Self.formParameters(pairs.joined(separator: "&"))
            switch state.withLock({ $0.authorize(AuthorizationRequest(parameters)) }) {
            case .redirect(let location):
                return HTTPServerResponse(status: 302, headers: ["Location": location, "Cache-Control": "no-store"])
            case .refused(let refusal): return Self.oauthError(refusal)
            }
        } catch {
            return Self.oauthError(error)
        }
    }

    /// `POST /oauth2/revoke` (RFC 7009 §2): ends the session of an access or refresh token; 200 even for unknown tokens.
    func revoke(_ request: HTTPServerRequest) -> HTTPServerResponse {
        do throws(Refusal) {
            let form = try Self.form(request)
            guard let token = form["token"] else { throw Refusal(.invalidRequest, "token is required") }
            try state.withLock { state throws(Refusal) in
                guard let clientID = form["client_id"], state.clients[clientID] != nil else {
                    throw Refusal(.invalidClient, "unknown client_id", status: 401)
                }
                try state.revoke(token: token, clientID: clientID)
            }
            return Self.json(200, Empty())
        } catch {
            return Self.oauthError(error)
        }
    }

    /// `GET /_matrix/client/v3/account/whoami`: the token's user and device, or `M_UNKNOWN_TOKEN` (soft logout when
    /// the token only expired; client-server API §"Soft logout").
    func whoami(_ request: HTTPServerRequest) -> HTTPServerResponse {
        let header = request.headers["authorization"] ?? ""
        let token = header.lowercased().hasPrefix("bearer ") ? String(header.dropFirst(7)) : ""
        let now = time.now()
        switch state.withLock({ $0.standing(ofAccessToken: token, now: now) }) {
        case .live(let device): return Self.json(200, WhoAmI(userID: settings.userID, deviceID: device.rawValue))
        case .expired: return Self.matrixError(401, errcode: "M_UNKNOWN_TOKEN", "Access token has expired", softLogout: true)
        case .unknown: return Self.matrixError(401, errcode: "M_UNKNOWN_TOKEN", "Unknown access token", softLogout: false)
        }
    }

    /// The parameters of an `application/x-www-form-urlencoded` body (RFC 6749 §3.2: each at most once).
    static func form(_ request: HTTPServerRequest) throws(Refusal) -> [String: String] {
        guard (request.headers["content-type"] ?? "").lowercased().hasPrefix("application/x-www-form-urlencoded") else {
            throw Refusal(.invalidRequest, "the body must be application/x-www-form-urlencoded")
        }
        return try formParameters(String(decoding: request.body, as: UTF8.self))
    }

    /// The parameters of form-encoded `text` (`+` is a space, then percent-decoding), each at most once.
    static func formParameters(_ text: String) throws(Refusal) -> [String: String] {
        var form: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            }
            guard let name = parts[0], let value = parts.count == 2 ? parts[1] : "", form[name] == nil else {
                throw Refusal(.invalidRequest, "a parameter is malformed or repeated")
            }
            form[name] = value
        }
        return form
    }

    /// `body` as JSON; with `noStore`, `Cache-Control: no-store` (RFC 6749 §5.1, for answers carrying secrets).
    static func json(_ status: Int, _ body: some Encodable, noStore: Bool = false) -> HTTPServerResponse {
        var response = HTTPServerResponse.json(status, body)
        if noStore { response.headers["Cache-Control"] = "no-store" }
        return response
    }

    /// An OAuth 2.0 error answer (RFC 6749 §5.2), never cached.
    static func oauthError(_ refusal: Refusal) -> HTTPServerResponse {
        json(refusal.status, OAuthErrorBody(error: refusal.code.rawValue, errorDescription: refusal.description), noStore: true)
    }

    /// A Matrix error answer (client-server API §"Standard error response").
    static func matrixError(_ status: Int, errcode: String, _ message: String, softLogout: Bool? = nil) -> HTTPServerResponse {
        json(status, MatrixErrorBody(errcode: errcode, error: message, softLogout: softLogout))
    }
}
