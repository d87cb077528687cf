import Foundation
import FoundationNetworking
import Bridge
@testable import IsthmusCLI
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import Matrix
import MatrixAppService
import MatrixAccount
import MatrixClient
import Synchronization
import TestSupport
import XCTest

/// The account's session against the test bed's real Synapse, as `@relay:localhost` on a device of each test's own: a
/// password login with a refresh token, the refresh after the access token expired (the bed's
/// `refreshable_access_token_lifetime` is 10 s), a session kept across a restart, logout, a wrong password, and the
/// `login`/`logout` commands, single sign-on through Synapse's CAS included.
final class AccountSynapseTests: XCTestCase {
    let relay = UserID("@relay:localhost")!
    var bed: TestBed!
    var directory: TemporaryDirectory!
    var device: DeviceID!

    override func setUp() async throws {
        bed = try TestBed.fromEnvironment()
        directory = try TemporaryDirectory()
        device = DeviceID.generated()
    }

    var storePath: String { directory.path("isthmus.sqlite") }

    /// A client acting as the relay account through a keeper over the SQLite store at ``storePath``.
    func account(password: String? = nil) throws -> (client: MatrixClient, keeper: SessionKeeper, store: Store) {
        let store = try Store(path: storePath, logger: .disabled)
        let configuration = MatrixClient.Configuration(homeserverURL: bed.synapseURL, accessToken: "", requestTimeout: .seconds(15))
        let keeper = SessionKeeper(configuration: .init(userID: relay, deviceID: device, canLogIn: true), password: password,
                                   client: MatrixClient(configuration: configuration, logger: .disabled),
                                   vault: StoreSessionVault(store: store), logger: .disabled)
        return (MatrixClient(configuration: configuration, tokens: keeper, logger: .disabled), keeper, store)
    }

    /// A client that sends `token` and nothing else (never refreshes).
    func fixed(_ token: AccessToken) -> MatrixClient {
        MatrixClient(configuration: .init(homeserverURL: bed.synapseURL, accessToken: token.secret), logger: .disabled)
    }

    /// Waits until Synapse refuses `token` as expired (401 `M_UNKNOWN_TOKEN` with `soft_logout`), asking it directly.
    func waitUntilExpired(_ token: AccessToken) async throws {
        let client = fixed(token)
        try await eventually("Synapse refuses the access token as expired", timeout: 30, pollEvery: .milliseconds(200)) {
            do throws(MatrixError) {
                _ = try await client.tokenOwner()
                return false
            } catch {
                return error.errcode == .unknownToken && error.softLogout
            }
        }
    }

    func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    func testAPasswordLoginGetsARefreshTokenAndACallAfterTheExpiryRefreshesFirst() async throws {
        let (client, keeper, store) = try account(password: bed.password)
        let owner = try await client.tokenOwner()
        XCTAssertEqual(owner, TokenOwner(userID: relay, deviceID: device))
        let first = try await XCTUnwrapAsync(await keeper.session)
        let refreshToken = try XCTUnwrap(first.refreshToken, "Synapse gives a refresh token when asked")
        let lifetime = try XCTUnwrap(first.expiresAt) - now()
        XCTAssert((5_000...10_000).contains(lifetime), "the bed's 10 s lifetime, less the time since the login: \(lifetime) ms")
        let stored = try await store.matrixSession(of: relay)
        XCTAssertEqual(stored?.accessToken, first.accessToken, "stored before its first use")

        try await waitUntilExpired(first.accessToken)
        let again = try await client.tokenOwner()
        XCTAssertEqual(again.deviceID, device)
        let second = try await XCTUnwrapAsync(await keeper.session)
        XCTAssertNotEqual(second.accessToken, first.accessToken)
        XCTAssertNotEqual(second.refreshToken, refreshToken, "Synapse rotates the refresh token")
        let rotated = try await store.matrixSession(of: relay)
        XCTAssertEqual(rotated?.accessToken, second.accessToken)
        XCTAssertEqual(rotated?.refreshToken, second.refreshToken, "the pair is kept together")

        // Once the new pair was used, Synapse refuses the old refresh token (a standby trading it would end up here).
        do throws(MatrixError) {
            _ = try await MatrixClient(configuration: .init(homeserverURL: bed.synapseURL, accessToken: ""), logger: .disabled).refresh(refreshToken)
            XCTFail("the superseded refresh token was accepted")
        } catch {
            XCTAssertEqual(error.status, 403)
            XCTAssertEqual(error.errcode, .forbidden)
        }
        try await client.logout()
    }

    /// A kept session whose expiry the bridge gets wrong (a clock set badly): the homeserver's refusal renews it.
    func testATokenSynapseRefusesIsRefreshedAndTheCallGoesThrough() async throws {
        let plain = MatrixClient(configuration: .init(homeserverURL: bed.synapseURL, accessToken: ""), logger: .disabled)
        let login = try await plain.login(LoginRequest(.password(user: "relay", password: bed.password), deviceID: device, refreshToken: true))
        var session = MatrixSession(login: login, requested: device, now: now())
        session.expiresAt = now() + 3_600_000
        let store = try Store(path: storePath, logger: .disabled)
        try await StoreSessionVault(store: store).keep(session)
        try await waitUntilExpired(login.accessToken)

        let (client, keeper, _) = try account(password: nil)
        let owner = try await client.tokenOwner()
        XCTAssertEqual(owner.deviceID, device)
        let renewed = try await XCTUnwrapAsync(await keeper.session)
        XCTAssertNotEqual(renewed.accessToken, login.accessToken)
        let stall = await keeper.stall
        XCTAssertNil(stall)
        try await client.logout()
    }

    func testAKeptSessionSurvivesARestartWithoutANewLogin() async throws {
        let (client, keeper, store) = try account(password: bed.password)
        _ = try await client.tokenOwner()
        let first = try await XCTUnwrapAsync(await keeper.session)
        await store.close()

        // The restarted process has no password: only the kept session can work.
        let (restarted, restartedKeeper, _) = try account(password: nil)
        let owner = try await restarted.tokenOwner()
        XCTAssertEqual(owner, TokenOwner(userID: relay, deviceID: device))
        let taken = await restartedKeeper.session
        XCTAssertEqual(taken?.deviceID, first.deviceID)
        XCTAssertEqual(taken?.refreshToken, first.refreshToken, "the same session, unless it was due for a refresh")
        try await restarted.logout()
    }

    func testAWrongPasswordStallsTheKeeperWithAClearReason() async throws {
        let (client, keeper, _) = try account(password: "not-the-password")
        do throws(MatrixError) {
            _ = try await client.tokenOwner()
            XCTFail("answered")
        } catch {
            XCTAssertEqual(error.kind, .unusable)
            XCTAssertTrue(error.message.contains("the homeserver refused the password login (M_FORBIDDEN Invalid username or password)"),
                          error.message)
        }
        let stall = await keeper.stall
        XCTAssertEqual(stall, .loginRefused(.forbidden, "Invalid username or password"))
    }

    // MARK: The commands

    /// The bed's Synapse in client mode as `@relay:localhost` on this test's device, the store in this test's folder.
    func clientConfig(password: String? = nil) throws -> String {
        try directory.write("""
            matrix:
              homeserver_url: \(bed.synapseURL.absoluteString)
              server_name: localhost
              mode: client
              client:
                user_id: "@relay:localhost"
                device_id: \(device.rawValue)
            \(password.map { "    password: \"\($0)\"\n" } ?? "")xmpp:
              component_domain: \(bed.componentDomain)
              server_port: \(bed.componentPort)
              component_secret: "\(bed.componentSecret)"
            database:
              path: isthmus.sqlite

            """, to: "isthmus.yaml")
    }

    /// Runs `isthmus <arguments>` in-process; `output` may be watched while it runs.
    static func isthmus(_ arguments: [String], input: String? = nil, environment: [String: String] = [:],
                 output: OutputCapture = OutputCapture()) async -> (status: Int32, output: OutputCapture) {
        let status = await IsthmusCommandLine.run(arguments, environment: environment, print: output.print, printError: output.printError,
                                                  logSink: .memory(), readInput: { input })
        return (status, output)
    }

    func testLoginDoctorAndLogoutFromTheCommandLine() async throws {
        let config = try clientConfig()
        let login = await Self.isthmus(["login", "--password-stdin", "-c", config], input: bed.password + "\n")
        XCTAssertEqual(login.status, 0, login.output.error)
        XCTAssertEqual(login.output.outputLines.first, "Logged in as @relay:localhost on device \(device!); the session is stored in the database.")
        let store = try Store(path: storePath, logger: .disabled)
        let kept = try await XCTUnwrapAsync(try await store.matrixSession(of: relay))
        XCTAssertFalse((login.output.output + login.output.error).contains(kept.accessToken.secret), "no token printed")
        XCTAssertFalse((login.output.output + login.output.error).contains(try XCTUnwrap(kept.refreshToken).secret))

        let loaded = try Config.load(path: config, environment: [:])
        let findings = await MatrixDoctor.check(config: loaded, logger: .disabled)
        XCTAssertEqual(findings.map(\.check), ["matrix.homeserver", "matrix.login", "matrix.session", "matrix.rooms"])
        XCTAssertTrue(findings.allSatisfy(\.ok), "\(findings)")
        XCTAssertTrue(findings[2].detail.hasPrefix("the homeserver accepts the stored session of @relay:localhost on device \(device!)"),
                      findings[2].detail)
        XCTAssertEqual(findings[3].detail, "no rooms are linked yet")
        XCTAssertFalse(findings.map(\.detail).joined().contains(kept.accessToken.secret))
        // A link whose room the account is not in (it left, or was kicked): doctor says so and fails.
        let away = try XCTUnwrap(RoomID("!nowhere\(UInt32.random(in: 0...UInt32.max)):localhost"))
        try await store.insertRoomLink(RoomLink(matrixRoom: away, matrixAlias: nil, muc: JID("away@conference.localhost")!))
        let missing = await MatrixDoctor.check(config: loaded, logger: .disabled)
        XCTAssertEqual(missing.last?.check, "matrix.rooms")
        XCTAssertEqual(missing.last?.ok, false)
        XCTAssertEqual(missing.last?.detail, "@relay:localhost is not in \(away) (linked with away@conference.localhost): nothing crosses "
                       + "there until someone invites it again (serve joins a linked room it is invited to)")

        let logout = await Self.isthmus(["logout", "-c", config])
        XCTAssertEqual(logout.status, 0, logout.output.error)
        XCTAssertEqual(logout.output.outputLines, [
            "Logged out @relay:localhost: the homeserver ended the session and deleted device \(device!); the stored session is deleted.",
        ])
        do throws(MatrixError) {
            _ = try await fixed(kept.accessToken).tokenOwner()
            XCTFail("the token still works after logout")
        } catch {
            XCTAssertEqual(error.status, 401)
            XCTAssertEqual(error.errcode, .unknownToken)
        }
        let gone = try await store.matrixSession(of: relay)
        XCTAssertNil(gone)
        let again = await Self.isthmus(["logout", "-c", config])
        XCTAssertEqual(again.output.outputLines, ["No Matrix session is stored for @relay:localhost; nothing to log out."])
    }

    func testLoginWithTheEnvironmentsPasswordAndAWrongOne() async throws {
        let config = try clientConfig(password: "wrong-in-the-file")
        let wrong = await Self.isthmus(["login", "-c", config])
        XCTAssertEqual(wrong.status, 1)
        XCTAssertEqual(wrong.output.errorLines,
                       ["Error: the homeserver refused the login as @relay:localhost: Invalid username or password (M_FORBIDDEN)"])
        let right = await Self.isthmus(["login", "-c", config], environment: [Config.SecretVariable.matrixPassword: bed.password])
        XCTAssertEqual(right.status, 0, right.output.error)
        let lifetime = try XCTUnwrap(right.output.outputLines.last)
        XCTAssertTrue(["Its access token lasts 9 s; serve refreshes it with the stored refresh token.",
                       "Its access token lasts 10 s; serve refreshes it with the stored refresh token."].contains(lifetime),
                      "the bed's 10 s, less what the login took: \(lifetime)")
        let logout = await Self.isthmus(["logout", "-c", config])
        XCTAssertEqual(logout.status, 0)
    }

    /// Single sign-on, the whole way a browser goes: the URL the command prints, Synapse's redirect to its OpenID
    /// Connect provider (run here: it signs `relay` in at once), the code back to Synapse, which trades it at the
    /// provider's token endpoint and reads the user from its userinfo endpoint, then Synapse's redirect with a login
    /// token to the command's loopback callback — which answers the browser's last request — and the token's exchange.
    func testSingleSignOnThroughSynapsesOpenIDConnectProviderEndsAtTheLoopbackCallback() async throws {
        let provider = try FakeOIDCProvider(port: try XCTUnwrap(bed.ssoPort, "restart the bed: it has no ISTHMUS_TEST_SSO_PORT"), user: "relay")
        let providerRun = Task { await provider.run() }
        defer {
            provider.stop()
            providerRun.cancel()
        }
        let config = try clientConfig()
        let output = OutputCapture()
        async let run = Self.isthmus(["login", "--sso", "-c", config], output: output)
        let printed = try await eventuallyValue("the command prints the single sign-on URL") {
            output.outputLines.first { $0.contains("/_matrix/client/v3/login/sso/redirect?redirectUrl=") }
        }
        XCTAssertTrue(printed.hasPrefix(bed.synapseURL.absoluteString + "/_matrix/client/v3/login/sso/redirect?redirectUrl=http%3A%2F%2F127.0.0.1%3A"),
                      printed)
        let (page, response) = try await URLSession.shared.data(from: try XCTUnwrap(URL(string: printed)))
        XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
        XCTAssertEqual(String(decoding: page, as: UTF8.self), "Signed in: isthmus login goes on in the terminal. You can close this page.\n")
        XCTAssertEqual(response.url?.host, "127.0.0.1", "the browser ended at the callback")
        XCTAssertEqual(provider.exchanges, 1, "Synapse traded the code at the provider")
        XCTAssertEqual(provider.userinfoReads, 1, "Synapse read the user from the provider")

        let (status, _) = await run
        XCTAssertEqual(status, 0, output.error)
        XCTAssertEqual(output.outputLines.first { $0.hasPrefix("Logged in") },
                       "Logged in as @relay:localhost on device \(device!); the session is stored in the database.")
        let store = try Store(path: storePath, logger: .disabled)
        let kept = try await XCTUnwrapAsync(try await store.matrixSession(of: relay))
        let owner = try await fixed(kept.accessToken).tokenOwner()
        XCTAssertEqual(owner, TokenOwner(userID: relay, deviceID: device))
        XCTAssertNotNil(kept.refreshToken, "a token login asks for a refresh token too")
        try await fixed(kept.accessToken).logout()
    }
}

/// The OpenID Connect provider Synapse's single sign-on sends browsers to, as the bed configures it (the `profile`
/// scope only, so Synapse reads the user from the userinfo endpoint and needs no signed ID token):
/// `/oidc/authorize` signs `user` in at once (a 302 back to Synapse with a code and the state it was given),
/// `/oidc/token` trades the code for an access token (checking the client's credentials as the bed set them), and
/// `/oidc/userinfo` names the user for that token.
final class FakeOIDCProvider: Sendable {
    private let server: HTTPServer
    private let user: String
    private let counts = Mutex((exchanges: 0, userinfo: 0))

    init(port: Int, user: String) throws {
        server = try HTTPServer(configuration: .init(host: "127.0.0.1", port: port), logger: .disabled)
        self.user = user
    }

    /// How many codes Synapse traded, and how many times it read the user.
    var exchanges: Int { counts.withLock { $0.exchanges } }
    var userinfoReads: Int { counts.withLock { $0.userinfo } }

    func run() async {
        for await request in server.requests {
            request.respond(answer(request))
        }
    }

    private func answer(_ request: HTTPServerRequest) -> HTTPServerResponse {
        func decoded(_ text: String?) -> String? { text.flatMap { PercentEncoding.decode($0.replacingOccurrences(of: "+", with: " ")) } }
        switch request.path {
        case "/oidc/authorize":
            let query = Dictionary(request.query.map { ($0.name, decoded($0.value) ?? "") }, uniquingKeysWith: { first, _ in first })
            guard let redirect = query["redirect_uri"], let state = query["state"], query["client_id"] == "synapse",
                  query["response_type"] == "code" else { return HTTPServerResponse(status: 400) }
            return HTTPServerResponse(status: 302, headers: [
                "Location": redirect + (redirect.contains("?") ? "&" : "?") + "code=isthmus-code&state=" + PercentEncoding.encode(state)])
        case "/oidc/token":
            let form = String(decoding: request.body, as: UTF8.self).split(separator: "&").reduce(into: [String: String]()) { fields, pair in
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                fields[parts[0]] = decoded(parts.count > 1 ? parts[1] : "")
            }
            guard form["grant_type"] == "authorization_code", form["code"] == "isthmus-code", form["client_id"] == "synapse",
                  form["client_secret"] == "synapse-secret" else {
                return HTTPServerResponse(status: 400, headers: ["Content-Type": "application/json"], body: Data(#"{"error": "invalid_grant"}"#.utf8))
            }
            counts.withLock { $0.exchanges += 1 }
            return HTTPServerResponse(status: 200, headers: ["Content-Type": "application/json"],
                                      body: Data(#"{"access_token": "oidc-access", "token_type": "Bearer", "expires_in": 60}"#.utf8))
        case "/oidc/userinfo":
            guard request.headers["authorization"] == "Bearer oidc-access" else { return HTTPServerResponse(status: 401) }
            counts.withLock { $0.userinfo += 1 }
            return HTTPServerResponse(status: 200, headers: ["Content-Type": "application/json"],
                                      body: Data(#"{"sub": "isthmus-\#(user)", "preferred_username": "\#(user)"}"#.utf8))
        default:
            return HTTPServerResponse(status: 404)
        }
    }

    func stop() {
        server.stopAccepting()
        server.close()
    }
}

/// `XCTUnwrap` of an async expression.
func XCTUnwrapAsync<T>(_ expression: @autoclosure () async throws -> T?, file: StaticString = #filePath, line: UInt = #line) async throws -> T {
    let value = try await expression()
    return try XCTUnwrap(value, file: file, line: line)
}
