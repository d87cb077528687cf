import Foundation
import IsthmusCommon
import Matrix
import MatrixAppService
import MatrixClient
import Synchronization
import TestSupport
import Testing

/// The session endpoints and the token source against a scripted fake homeserver on loopback: the bodies sent, what
/// carries a token, and a refused token renewed once.
@Suite struct MatrixClientLoginTests {
    /// A token source that hands out `first` and renews into `second`, recording the refusals it was told of.
    final class TwoTokens: AccessTokens {
        let refusals = Mutex<[TokenRejection]>([])
        func current() async throws(MatrixError) -> AccessToken { refusals.withLock { $0.isEmpty } ? AccessToken("first")! : AccessToken("second")! }
        func renewed(after rejection: TokenRejection) async throws(MatrixError) -> AccessToken {
            refusals.withLock { $0.append(rejection) }
            return AccessToken("second")!
        }
    }

    func withFake(tokens: (any AccessTokens)? = nil, _ respond: @escaping @Sendable (FakeHomeserver.Recorded, Int) -> HTTPServerResponse,
                  _ body: (MatrixClient, FakeHomeserver) async throws -> Void) async throws {
        let fake = try FakeHomeserver(respond: respond)
        let client = MatrixClient(configuration: .init(homeserverURL: fake.url, accessToken: "", retryPolicy: MatrixClientLoopbackTests.fast),
                                  tokens: tokens, logger: .disabled)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await fake.run() }
            defer { fake.stop() }
            try await body(client, fake)
        }
    }

    func json(_ data: Data) throws -> NSDictionary { try #require(JSONSerialization.jsonObject(with: data) as? NSDictionary) }

    @Test func aPasswordLoginAsksForARefreshTokenOnItsDeviceAndSendsNoToken() async throws {
        try await withFake({ _, _ in
            FakeHomeserver.json(200, #"""
                {"user_id": "@relay:example.org", "access_token": "syt_a", "device_id": "ISTHMUSRELAY", "refresh_token": "syr_a",
                 "expires_in_ms": 300000}
                """#)
        }) { client, fake in
            let answer = try await client.login(LoginRequest(.password(user: "@relay:example.org", password: "hunter2"),
                                                             deviceID: DeviceID("ISTHMUSRELAY"), initialDeviceDisplayName: "Isthmus bridge",
                                                             refreshToken: true))
            #expect(answer == LoginResponse(userID: UserID("@relay:example.org")!, accessToken: AccessToken("syt_a")!,
                                            deviceID: DeviceID("ISTHMUSRELAY"), refreshToken: RefreshToken("syr_a"), expiresInMilliseconds: 300_000))
            let request = try #require(fake.requests.first)
            #expect(request.method == "POST" && request.path == "/_matrix/client/v3/login" && request.authorization == nil)
            #expect(try json(request.body) == [
                "type": "m.login.password", "identifier": ["type": "m.id.user", "user": "@relay:example.org"], "password": "hunter2",
                "device_id": "ISTHMUSRELAY", "initial_device_display_name": "Isthmus bridge", "refresh_token": true,
            ] as NSDictionary)
        }
    }

    @Test func aTokenLoginSendsTheLoginToken() async throws {
        try await withFake({ _, _ in FakeHomeserver.json(200, #"{"user_id": "@relay:example.org", "access_token": "syt_b"}"#) }) { client, fake in
            let answer = try await client.login(LoginRequest(.token("loginTokenFromSSO"), deviceID: DeviceID("ISTHMUSRELAY")))
            #expect(answer.deviceID == nil && answer.refreshToken == nil && answer.expiresInMilliseconds == nil)
            #expect(try json(try #require(fake.requests.first).body)
                    == ["type": "m.login.token", "token": "loginTokenFromSSO", "device_id": "ISTHMUSRELAY"] as NSDictionary)
        }
    }

    @Test func aWrongPasswordIsAForbiddenLoginNotRetried() async throws {
        try await withFake({ _, _ in FakeHomeserver.json(403, #"{"errcode": "M_FORBIDDEN", "error": "Invalid username or password"}"#) }) { client, fake in
            do throws(MatrixError) {
                _ = try await client.login(user: "relay", password: "wrong")
                Issue.record("logged in")
            } catch {
                #expect(error.call == .login && error.status == 403 && error.errcode == .forbidden)
                #expect(error.description == "login (POST /_matrix/client/v3/login) failed: HTTP 403 M_FORBIDDEN Invalid username or password")
            }
            #expect(fake.requests.count == 1)
        }
    }

    @Test func aRefreshTradesTheRefreshTokenWithoutAnAccessToken() async throws {
        try await withFake(tokens: TwoTokens(), { _, _ in FakeHomeserver.json(200, #"{"access_token": "syt_c", "expires_in_ms": 60000}"#) }) { client, fake in
            let answer = try await client.refresh(RefreshToken("syr_a")!)
            #expect(answer == RefreshResponse(accessToken: AccessToken("syt_c")!, expiresInMilliseconds: 60_000))
            let request = try #require(fake.requests.first)
            #expect(request.path == "/_matrix/client/v3/refresh" && request.authorization == nil)
            #expect(try json(request.body) == ["refresh_token": "syr_a"] as NSDictionary)
        }
    }

    @Test func aRefusedTokenIsRenewedOnceAndTheCallSentAgain() async throws {
        let tokens = TwoTokens()
        try await withFake(tokens: tokens, { request, _ in
            request.authorization == "Bearer second"
                ? FakeHomeserver.json(200, #"{"user_id": "@relay:example.org", "device_id": "ISTHMUSRELAY"}"#)
                : FakeHomeserver.json(401, #"{"errcode": "M_UNKNOWN_TOKEN", "error": "Access token has expired", "soft_logout": true}"#)
        }) { client, fake in
            let owner = try await client.tokenOwner()
            #expect(owner == TokenOwner(userID: UserID("@relay:example.org")!, deviceID: DeviceID("ISTHMUSRELAY")))
            #expect(fake.requests.map(\.authorization) == ["Bearer first", "Bearer second"])
            #expect(tokens.refusals.withLock { $0 } == [TokenRejection(token: AccessToken("first")!, softLogout: true)])
        }
    }

    @Test func aRenewedTokenRefusedAgainFailsTheCall() async throws {
        let tokens = TwoTokens()
        try await withFake(tokens: tokens, { _, _ in
            FakeHomeserver.json(401, #"{"errcode": "M_UNKNOWN_TOKEN", "error": "Invalid access token passed.", "soft_logout": false}"#)
        }) { client, fake in
            do throws(MatrixError) {
                try await client.logout()
                Issue.record("logged out")
            } catch {
                #expect(error.status == 401 && error.errcode == .unknownToken && !error.softLogout)
            }
            #expect(fake.requests.map(\.authorization) == ["Bearer first", "Bearer second"])
            #expect(fake.requests.allSatisfy { $0.method == "POST" && $0.path == "/_matrix/client/v3/logout" })
            #expect(tokens.refusals.withLock { $0.count } == 1)
        }
    }

    @Test func aFixedTokenIsNeverRenewedAndTheSoftLogoutIsReported() async throws {
        try await withFake({ _, _ in FakeHomeserver.json(401, #"{"errcode": "M_UNKNOWN_TOKEN", "error": "Soft logged out", "soft_logout": true}"#) }) { client, fake in
            do throws(MatrixError) {
                _ = try await client.tokenOwner()
                Issue.record("answered")
            } catch {
                #expect(error.softLogout && error.errcode == .unknownToken)
            }
            #expect(fake.requests.count == 1)
        }
    }

    @Test func loginFlowsAndOAuthDiscovery() async throws {
        try await withFake({ request, _ in
            switch request.path {
            case "/_matrix/client/v3/login":
                FakeHomeserver.json(200, #"{"flows": [{"type": "m.login.sso", "identity_providers": []}, {"type": "m.login.token"}]}"#)
            default:
                FakeHomeserver.json(200, #"""
                    {"issuer": "https://auth.example.org/", "authorization_endpoint": "https://auth.example.org/authorize",
                     "token_endpoint": "https://auth.example.org/token",
                     "device_authorization_endpoint": "https://auth.example.org/device", "grant_types_supported": ["refresh_token"]}
                    """#)
            }
        }) { client, _ in
            let flows = try await client.loginFlows()
            #expect(flows.offers(LoginType.sso) && flows.offers(LoginType.token) && !flows.offers(LoginType.password))
            let metadata = try await client.authMetadata()
            #expect(metadata == AuthMetadata(
                issuer: "https://auth.example.org/", authorizationEndpoint: "https://auth.example.org/authorize",
                tokenEndpoint: "https://auth.example.org/token", deviceAuthorizationEndpoint: "https://auth.example.org/device",
                grantTypesSupported: ["refresh_token"]))
            #expect(metadata?.offersDeviceGrant == false, "its grant types leave the device grant out")
            #expect(metadata?.offersAuthorizationCode == false, "no S256")
        }
        try await withFake({ _, _ in FakeHomeserver.json(404, #"{"errcode": "M_UNRECOGNIZED", "error": "Unrecognized request"}"#) }) { client, fake in
            let none = try await client.authMetadata()
            #expect(none == nil)
            #expect(fake.requests.first?.path == "/_matrix/client/v1/auth_metadata")
        }
    }
}
