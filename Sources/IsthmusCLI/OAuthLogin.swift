import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import MatrixAccount
import MatrixClient

/// `isthmus login --oauth`: a session minted by the homeserver's OAuth 2.0 authorization server ("next-generation
/// auth", client-server API §"OAuth 2.0 API"). The bridge registers itself as a public native client (RFC 7591, anew
/// for each login, as the spec asks), then signs in with the device authorization grant (RFC 8628: the person opens a
/// URL anywhere and enters a code; made for a headless service) where the server offers it, else with the
/// authorization code grant, PKCE S256 and a loopback redirect (RFC 7636, RFC 8252). The scope asks for the whole
/// client-server API on the chosen device. The tokens are checked with `/account/whoami` before they are kept: a
/// session of another user is revoked again. Does network I/O; prints what the person must do, never a token.
struct OAuthLogin {
    let config: Config
    let account: Config.MatrixAccount
    let context: CommandContext
    let client: MatrixClient
    let metadata: AuthMetadata
    /// How long the person has to sign in through the browser (the device grant's own lifetime applies to it).
    var browserTimeout: Duration = .seconds(300)

    /// Signs in on `device`; the session to keep.
    func run(device: DeviceID) async throws(CommandFailure) -> MatrixSession {
        guard device.isOAuthCompatible else {
            throw CommandFailure("device \(device) cannot be named under OAuth 2.0 (at least 10 characters from A-Z a-z 0-9 - . _ ~): "
                                 + "set matrix.client.device_id to such an id, or leave it out")
        }
        guard let registration = AuthMetadata.usableEndpoint(metadata.registrationEndpoint),
              let tokenEndpoint = AuthMetadata.usableEndpoint(metadata.tokenEndpoint) else {
            throw CommandFailure("the authorization server \(metadata.issuer) offers no client registration and token endpoint over https; "
                                 + "Isthmus cannot register itself there")
        }
        let scope = OAuthScope.matrix(device: device)
        let tokens: OAuthTokenResponse
        let clientID: String
        if metadata.offersDeviceGrant, let endpoint = metadata.deviceAuthorizationEndpoint {
            clientID = try await register(at: registration, redirectURI: Self.placeholderRedirect)
            tokens = try await deviceGrant(endpoint: endpoint, tokenEndpoint: tokenEndpoint, clientID: clientID, scope: scope)
        } else if metadata.offersAuthorizationCode, let authorize = AuthMetadata.usableEndpoint(metadata.authorizationEndpoint) {
            let callback: SSOCallback
            do {
                callback = try SSOCallback(logger: context.logger(config, label: "oauth"))
            } catch {
                throw CommandFailure("cannot listen on 127.0.0.1 for the authorization server's answer: \(error)")
            }
            defer { callback.close() }
            clientID = try await register(at: registration, redirectURI: callback.redirectURL)
            tokens = try await authorizationCode(authorize: authorize, tokenEndpoint: tokenEndpoint, clientID: clientID, scope: scope,
                                                 callback: callback)
        } else {
            throw CommandFailure("the authorization server \(metadata.issuer) offers neither the device authorization grant nor "
                                 + "the authorization code grant with PKCE S256")
        }
        return try await checked(tokens, device: device, clientID: clientID)
    }

    /// The loopback redirect registered when the device grant is used: the spec's registration asks for the
    /// authorization code grant (and so a redirect URI) in every client's metadata.
    static let placeholderRedirect = "http://127.0.0.1/isthmus-oauth"

    /// What the consent screen shows as the client's home page: Isthmus has no public one yet (see isthmus.doap), so
    /// the operator's homeserver, whose bridge this is, stands in (`client_uri` must be https).
    var clientURI: String {
        let home = config.matrix.homeserverURL
        guard home.scheme?.lowercased() == "https", let host = home.host else { return "https://\(config.matrix.serverName)/" }
        return "https://\(host)/"
    }

    private func register(at endpoint: String, redirectURI: String) async throws(CommandFailure) -> String {
        do {
            return try await client.registerOAuthClient(at: endpoint, OAuthClientMetadata(clientURI: clientURI, redirectURIs: [redirectURI]))
        } catch {
            throw CommandFailure("the authorization server refused to register Isthmus as a client: \(error.message)")
        }
    }

    private func deviceGrant(endpoint: String, tokenEndpoint: String, clientID: String, scope: String) async throws(CommandFailure)
        -> OAuthTokenResponse {
        let authorization: DeviceAuthorization
        do {
            authorization = try await client.authorizeDevice(at: endpoint, clientID: clientID, scope: scope)
        } catch {
            throw CommandFailure("the authorization server refused the device authorization: \(error.message)")
        }
        if let complete = authorization.verificationURIComplete {
            context.print("To sign in as \(account.userID), open \(complete)")
            context.print("(or open \(authorization.verificationURI) and enter the code \(authorization.userCode)).")
        } else {
            context.print("To sign in as \(account.userID), open \(authorization.verificationURI) and enter the code \(authorization.userCode).")
        }
        context.print("Waiting for the sign-in (the code expires in \(max(1, authorization.expiresIn / 60)) minutes) …")
        var polling = DeviceGrantPolling(authorization)
        let issued = ContinuousClock.now
        var step = polling.first
        while true {
            switch step {
            case .done(let tokens):
                return tokens
            case .failed(let why):
                throw CommandFailure("no session: \(why); run isthmus login --oauth again")
            case .poll(let seconds):
                do { try await Task.sleep(for: .seconds(seconds)) } catch { throw CommandFailure("interrupted") }
                let outcome: DeviceGrantPolling.Outcome
                do {
                    outcome = .tokens(try await client.requestToken(at: tokenEndpoint, .deviceCode(authorization.deviceCode), clientID: clientID))
                } catch where error.oauthError != nil || (error.kind == .homeserver && (error.status ?? 0) < 500 && error.status != 429) {
                    outcome = .refused(error.oauthError, message: error.message)
                } catch {
                    outcome = .unanswered(error.message)
                }
                step = polling.next(after: outcome, elapsed: Int((ContinuousClock.now - issued).components.seconds))
            }
        }
    }

    private func authorizationCode(authorize: String, tokenEndpoint: String, clientID: String, scope: String,
                                   callback: SSOCallback) async throws(CommandFailure) -> OAuthTokenResponse {
        let pkce = PKCE()
        let state = Digest.randomHex(bytes: 16)
        let query: [(String, String)] = [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", callback.redirectURL), ("scope", scope),
            ("state", state), ("response_mode", "query"), ("code_challenge", pkce.challenge), ("code_challenge_method", pkce.method),
        ]
        let separator = authorize.contains("?") ? "&" : "?"
        context.print("Open this URL in a browser and sign in as \(account.userID):")
        context.print(authorize + separator + query.map { PercentEncoding.encode($0.0) + "=" + PercentEncoding.encode($0.1) }.joined(separator: "&"))
        context.print("Waiting for the authorization server to send the browser back to \(callback.redirectURL) …")
        guard let answer = await callback.redirect(carrying: ["code", "error"], timeout: browserTimeout) else {
            throw CommandFailure("no answer from the authorization server within \(browserTimeout.components.seconds / 60) minutes; "
                                 + "run isthmus login --oauth again")
        }
        guard answer["state"] == state else { throw CommandFailure("the browser came back with another login's state; run isthmus login --oauth again") }
        guard let code = answer["code"], !code.isEmpty else {
            throw CommandFailure("the authorization server refused the sign-in: \(answer["error"] ?? "-")"
                                 + (answer["error_description"].map { " (\($0))" } ?? ""))
        }
        do {
            return try await client.requestToken(at: tokenEndpoint, .authorizationCode(code: code, redirectURI: callback.redirectURL,
                                                                                        verifier: pkce.verifier), clientID: clientID)
        } catch {
            throw CommandFailure("the authorization server refused the code: \(error.message)")
        }
    }

    /// The session, once the homeserver says whose tokens they are; another user's are revoked again.
    private func checked(_ tokens: OAuthTokenResponse, device: DeviceID, clientID: String) async throws(CommandFailure) -> MatrixSession {
        let owner: TokenOwner
        let asUser = MatrixClient(configuration: .init(homeserverURL: config.matrix.homeserverURL, accessToken: tokens.accessToken.secret,
                                                       requestTimeout: .seconds(15), retryPolicy: RetryPolicy(maxAttempts: 2)),
                                  logger: context.logger(config, label: "matrix.client"))
        do {
            owner = try await asUser.tokenOwner()
        } catch {
            throw CommandFailure("the homeserver did not accept the new session: \(error.message)")
        }
        guard owner.userID == account.userID else {
            if let revocation = AuthMetadata.usableEndpoint(metadata.revocationEndpoint) {
                try? await client.revoke(at: revocation, accessToken: tokens.accessToken, clientID: clientID)
            }
            throw CommandFailure("the sign-in was as \(owner.userID), not matrix.client.user_id \(account.userID); that session was revoked again")
        }
        return MatrixSession(oauth: tokens, userID: owner.userID, deviceID: owner.deviceID ?? device, clientID: clientID,
                             now: CommandContext.nowMilliseconds())
    }
}
