import Foundation
import IsthmusCommon
import MatrixAccount
import MatrixAppService
import MatrixClient
import Synchronization
import TestSupport
import Testing

/// OAuth 2.0 ("next-generation auth") as the bridge speaks it, with literal wire text: PKCE, the device grant's
/// polling, the client's calls to an authorization server's endpoints, and an OAuth session refreshed by the keeper at
/// the token endpoint the homeserver names.
@Suite struct OAuthClientTests {
    @Test func pkceMatchesRFC7636sExample() {
        // RFC 7636 Appendix B.
        let pkce = PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(pkce.method == "S256")
        let fresh = PKCE()
        #expect(fresh.verifier.count == 64 && fresh.verifier != PKCE().verifier)
    }

    @Test func devicePollingWaitsSlowsDownBacksOffAndEnds() {
        let authorization = DeviceAuthorization(deviceCode: "d", userCode: "ABCD-EFGH", verificationURI: "https://auth.example/link",
                                                expiresIn: 40, interval: 2)
        var polling = DeviceGrantPolling(authorization)
        #expect(polling.first == .poll(afterSeconds: 2))
        #expect(polling.next(after: .refused(.authorizationPending, message: "authorization_pending"), elapsed: 2) == .poll(afterSeconds: 2))
        #expect(polling.next(after: .refused(.slowDown, message: "slow_down"), elapsed: 4) == .poll(afterSeconds: 7), "+5 s (RFC 8628 §3.5)")
        #expect(polling.next(after: .refused(.authorizationPending, message: ""), elapsed: 11) == .poll(afterSeconds: 7), "and it stays")
        #expect(polling.next(after: .unanswered("reset"), elapsed: 18) == .poll(afterSeconds: 14), "backoff doubles")
        #expect(polling.next(after: .refused(.authorizationPending, message: ""), elapsed: 34) == .failed("the code expired before anyone signed in"))
        let tokens = OAuthTokenResponse(accessToken: AccessToken("mat_a")!, refreshToken: RefreshToken("mar_a")!, expiresIn: 300)
        #expect(polling.next(after: .tokens(tokens), elapsed: 33) == .done(tokens))
        #expect(polling.next(after: .refused(.accessDenied, message: "access_denied"), elapsed: 3) == .failed("the sign-in was denied"))
        #expect(polling.next(after: .refused(.expiredToken, message: "expired_token"), elapsed: 3) == .failed("the code expired before anyone signed in"))
        #expect(polling.next(after: .refused(.invalidClient, message: "invalid_client: who?"), elapsed: 3)
                == .failed("the authorization server refused: invalid_client: who?"))
    }

    @Test func endpointsMustBeHTTPSOrLoopback() {
        #expect(AuthMetadata.usableEndpoint("https://auth.example.org/oauth2/token") != nil)
        #expect(AuthMetadata.usableEndpoint("http://127.0.0.1:8080/token") != nil)
        #expect(AuthMetadata.usableEndpoint("http://localhost/token") != nil)
        #expect(AuthMetadata.usableEndpoint("http://auth.example.org/token") == nil)
        #expect(AuthMetadata.usableEndpoint("https://user:pw@auth.example.org/token") == nil)
        #expect(AuthMetadata.usableEndpoint("ftp://auth.example.org/") == nil)
        #expect(AuthMetadata.usableEndpoint(nil) == nil)
    }

    @Test func theCallsSendFormsAndReadRefusals() async throws {
        let fake = try FakeHomeserver { request, _ in
            switch request.path {
            case "/register": return FakeHomeserver.json(201, #"{"client_id": "01CLIENT", "client_uri": "https://example.org/"}"#)
            case "/device":
                return FakeHomeserver.json(200, #"""
                    {"device_code": "dc1", "user_code": "ABCD-EFGH", "verification_uri": "https://auth.example/link",
                     "verification_uri_complete": "https://auth.example/link?code=ABCD-EFGH", "expires_in": 600, "interval": 5}
                    """#)
            case "/token":
                let form = String(decoding: request.body, as: UTF8.self)
                if form.contains("device_code") {
                    return FakeHomeserver.json(400, #"{"error": "authorization_pending", "error_description": "not yet"}"#)
                }
                return FakeHomeserver.json(200, #"{"access_token": "mat_new", "token_type": "Bearer", "expires_in": 300, "refresh_token": "mar_new"}"#)
            default: return FakeHomeserver.json(200, "")
            }
        }
        let client = MatrixClient(configuration: .init(homeserverURL: fake.url, accessToken: ""), logger: .disabled)
        let base = fake.url.absoluteString
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await fake.run() }
            defer { fake.stop() }
            let clientID = try await client.registerOAuthClient(
                at: base + "/register", OAuthClientMetadata(clientURI: "https://example.org/", redirectURIs: ["http://127.0.0.1/cb"]))
            #expect(clientID == "01CLIENT")
            let registration = try #require(JSONSerialization.jsonObject(with: fake.requests[0].body) as? [String: Any])
            #expect(registration["grant_types"] as? [String] == ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"])
            #expect(registration["token_endpoint_auth_method"] as? String == "none")
            #expect(registration["application_type"] as? String == "native")
            #expect(registration["redirect_uris"] as? [String] == ["http://127.0.0.1/cb"])

            let device = DeviceID("ISTHMUSRELAY")!
            let authorization = try await client.authorizeDevice(at: base + "/device", clientID: clientID, scope: OAuthScope.matrix(device: device))
            #expect(authorization.userCode == "ABCD-EFGH" && authorization.interval == 5)
            #expect(String(decoding: fake.requests[1].body, as: UTF8.self)
                    == "client_id=01CLIENT&scope=urn%3Amatrix%3Aclient%3Aapi%3A*+urn%3Amatrix%3Aclient%3Adevice%3AISTHMUSRELAY")
            #expect(fake.requests[1].authorization == nil, "no access token goes to the authorization server")

            do throws(MatrixError) {
                _ = try await client.requestToken(at: base + "/token", .deviceCode("dc1"), clientID: clientID)
                Issue.record("no refusal")
            } catch {
                #expect(error.oauthError == .authorizationPending && error.status == 400)
                #expect(error.message == "authorization_pending: not yet")
            }
            let tokens = try await client.requestToken(at: base + "/token", .refreshToken(RefreshToken("mar_old")!), clientID: clientID)
            #expect(tokens == OAuthTokenResponse(accessToken: AccessToken("mat_new")!, refreshToken: RefreshToken("mar_new")!, expiresIn: 300))
            #expect(tokens.asRefresh.expiresInMilliseconds == 300_000)
            #expect(String(decoding: fake.requests[3].body, as: UTF8.self) == "grant_type=refresh_token&refresh_token=mar_old&client_id=01CLIENT")

            try await client.revoke(at: base + "/revoke", accessToken: AccessToken("mat_new")!, clientID: clientID)
            #expect(String(decoding: fake.requests[4].body, as: UTF8.self) == "token=mat_new&token_type_hint=access_token&client_id=01CLIENT")

            do throws(MatrixError) {
                _ = try await client.requestToken(at: "http://auth.example.org/token", .deviceCode("dc1"), clientID: clientID)
                Issue.record("sent to plain http")
            } catch {
                #expect(error.kind == .unusable)
            }
            #expect(fake.requests.count == 5, "nothing went to a plain-http endpoint")
        }
    }

    /// An OAuth session's refresh goes to the token endpoint the homeserver's auth_metadata names (asked once), as a
    /// refresh grant with the session's client id; the rotated pair is kept before use.
    @Test func theKeeperRefreshesAnOAuthSessionAtTheTokenEndpoint() async throws {
        let log = SessionKeeperTests.Log()
        let user = UserID("@relay:example.org")!, device = DeviceID("ISTHMUSRELAY")!
        let port = Mutex(0)
        let fake = try FakeHomeserver { request, _ in
            let bearer = request.authorization.map { String($0.dropFirst("Bearer ".count)) } ?? "-"
            log.add("\(request.method) \(request.path) \(bearer)")
            switch request.path {
            case "/_matrix/client/v1/auth_metadata":
                let base = "http://127.0.0.1:\(port.withLock { $0 })"
                return FakeHomeserver.json(200, #"{"issuer": "\#(base)/", "token_endpoint": "\#(base)/oauth2/token"}"#)
            case "/oauth2/token":
                let next = log.all.filter { $0.hasPrefix("POST /oauth2/token") }.count
                return FakeHomeserver.json(200, #"{"access_token": "mat_\#(next)", "refresh_token": "mar_\#(next)", "expires_in": 300}"#)
            default:
                guard bearer.hasPrefix("mat_") else {
                    return FakeHomeserver.json(401, #"{"errcode": "M_UNKNOWN_TOKEN", "error": "expired", "soft_logout": true}"#)
                }
                return FakeHomeserver.json(200, #"{"user_id": "@relay:example.org", "device_id": "ISTHMUSRELAY"}"#)
            }
        }
        port.withLock { $0 = fake.port }
        let expired = Int64(Date().timeIntervalSince1970 * 1000) - 1_000
        let vault = SessionKeeperTests.MemoryVault(MatrixSession(userID: user, deviceID: device, accessToken: AccessToken("mat_0")!,
                                                                 refreshToken: RefreshToken("mar_0")!, expiresAt: expired,
                                                                 authAPI: .oauth, oauthClientID: "01CLIENT"), log: log)
        let configuration = MatrixClient.Configuration(homeserverURL: fake.url, accessToken: "", retryPolicy: MatrixClientLoopbackTests.fast)
        let keeper = SessionKeeper(configuration: .init(userID: user, deviceID: device, canLogIn: false), password: nil,
                                   client: MatrixClient(configuration: configuration, logger: .disabled), vault: vault, logger: .disabled)
        let client = MatrixClient(configuration: configuration, tokens: keeper, logger: .disabled)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await fake.run() }
            defer { fake.stop() }
            _ = try await client.tokenOwner()
            // Expired again: a second refresh, without asking for the metadata again.
            try vault.kept.withLock { $0?.expiresAt = expired; $0?.accessToken = try #require(AccessToken("mat_1")) }
            _ = try await keeper.renewed(after: TokenRejection(token: AccessToken("mat_1")!, softLogout: true))
            #expect(log.all == [
                "GET /_matrix/client/v1/auth_metadata -", "POST /oauth2/token -", "kept mat_1", "GET /_matrix/client/v3/account/whoami mat_1",
                "POST /oauth2/token -", "kept mat_2",
            ])
            let forms = fake.requests.filter { $0.path == "/oauth2/token" }.map { String(decoding: $0.body, as: UTF8.self) }
            #expect(forms == ["grant_type=refresh_token&refresh_token=mar_0&client_id=01CLIENT",
                              "grant_type=refresh_token&refresh_token=mar_1&client_id=01CLIENT"])
            #expect(vault.kept.withLock { $0?.authAPI } == .oauth)
            #expect(vault.kept.withLock { $0?.oauthClientID } == "01CLIENT")
        }
    }
}
