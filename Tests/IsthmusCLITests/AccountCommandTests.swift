import Foundation
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import MatrixAppService
import TestSupport
import Testing

/// `login`, `logout`, and the appservice-only commands in Matrix client mode, against a scripted homeserver on loopback.
/// (On real Synapse: `MatrixRealServerTests.AccountSynapseTests`.)
@Suite struct AccountCommandTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A client-mode config for the homeserver at `url`; `client` goes into `matrix.client`.
    func clientConfig(_ url: URL, client: String = "") throws -> String {
        try directory.write("""
            matrix:
              homeserver_url: \(url.absoluteString)
              server_name: localhost
              mode: client
              client:
                user_id: "@relay:localhost"
            \(client)xmpp:
              component_domain: bridge.localhost
              component_secret: component-secret
            database:
              path: isthmus.sqlite

            """, to: "isthmus.yaml")
    }

    func serving(_ respond: @escaping @Sendable (FakeHomeserver.Recorded, Int) -> HTTPServerResponse,
                 _ body: (FakeHomeserver) async throws -> Void) async throws {
        let fake = try FakeHomeserver(respond: respond)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await fake.run() }
            defer { fake.stop() }
            try await body(fake)
        }
    }

    /// Login flows, a login answering for `@relay:localhost` with `syt_secret`, 404 for OAuth discovery.
    static func passwordHomeserver(_ request: FakeHomeserver.Recorded, _: Int) -> HTTPServerResponse {
        switch (request.method, request.path) {
        case ("GET", "/_matrix/client/v3/login"):
            FakeHomeserver.json(200, #"{"flows": [{"type": "m.login.password"}, {"type": "m.login.application_service"}]}"#)
        case ("POST", "/_matrix/client/v3/login"):
            FakeHomeserver.json(200, #"""
                {"user_id": "@relay:localhost", "access_token": "syt_secret", "device_id": "ISTHMUSRELAY",
                 "refresh_token": "syr_secret", "expires_in_ms": 300000}
                """#)
        default:
            FakeHomeserver.json(404, #"{"errcode": "M_UNRECOGNIZED", "error": "Unrecognized request"}"#)
        }
    }

    @Test func registrationAndLoginSayWhichModeTheyAreFor() async throws {
        let client = try clientConfig(URL(string: "http://127.0.0.1:9")!)
        let registration = await isthmus("registration", "-c", client)
        #expect(registration.status == 1)
        #expect(registration.stderr == "Error: matrix.mode is client: the bridge runs as the ordinary account @relay:localhost and "
                + "needs no appservice registration (log it in with isthmus login)\n")
        let appservice = try directory.write(ConfigFixture.minimal, to: "appservice.yaml")
        for command in ["login", "logout"] {
            let result = await isthmus(command, "-c", appservice)
            #expect(result.status == 1)
            #expect(result.stderr.hasPrefix("Error: isthmus \(command) is for matrix.mode: client"))
        }
        let both = await isthmus("login", "--password-stdin", "--sso", "-c", client)
        #expect(both.status == 64)
        #expect(both.output.errorLines.first == "Error: --password-stdin, --sso and --oauth do not go together.")
    }

    @Test func checkConfigDescribesTheAccount() async throws {
        let result = await isthmus("check-config", "-c", try clientConfig(URL(string: "http://127.0.0.1:9")!))
        #expect(result.status == 0)
        #expect(result.output.outputLines.contains("Matrix: client mode, as @relay:localhost on http://127.0.0.1:9 (no password: the session "
                                                   + "isthmus login stores); XMPP occupants speak through it, e.g. {nick}: {text}"))
    }

    @Test func aPasswordFromStandardInputLogsInAndStoresTheSessionWithoutPrintingIt() async throws {
        try await serving(Self.passwordHomeserver) { fake in
            let config = try clientConfig(fake.url, client: "    device_id: ISTHMUSRELAY\n")
            let result = await isthmus(["login", "--password-stdin", "-c", config], input: "hunter2\n")
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.output.outputLines == [
                "Logged in as @relay:localhost on device ISTHMUSRELAY; the session is stored in the database.",
                "Its access token lasts 300 s; serve refreshes it with the stored refresh token.",
            ])
            #expect(!(result.stdout + result.stderr + result.output.error).contains("secret"))
            let login = try #require(fake.requests.first { $0.method == "POST" })
            let sent = try #require(JSONSerialization.jsonObject(with: login.body) as? [String: Any])
            #expect(sent["password"] as? String == "hunter2", "the line, without its line break")
            #expect(sent["device_id"] as? String == "ISTHMUSRELAY" && sent["refresh_token"] as? Bool == true)
            let store = try Store(path: directory.path("isthmus.sqlite"), logger: .disabled)
            let kept = try #require(try await store.matrixSession(of: UserID("@relay:localhost")!))
            #expect(kept.accessToken == AccessToken("syt_secret") && kept.refreshToken == RefreshToken("syr_secret"))
        }
    }

    @Test func withoutAnyPasswordLoginSaysWhereToGiveOne() async throws {
        let result = await isthmus("login", "-c", try clientConfig(URL(string: "http://127.0.0.1:9")!))
        #expect(result.status == 1)
        #expect(result.stderr == "Error: no password: give it on standard input with --password-stdin, set matrix.client.password or "
                + "ISTHMUS_MATRIX_PASSWORD, or log in with --sso or --oauth\n")
        let empty = await isthmus(["login", "--password-stdin", "-c", try clientConfig(URL(string: "http://127.0.0.1:9")!)], input: "\n")
        #expect(empty.stderr == "Error: --password-stdin: standard input held no password\n")
    }

    @Test func aHomeserverThatMovedToOAuthIsNamedWithWhatToDo() async throws {
        try await serving({ request, _ in
            request.path == "/_matrix/client/v1/auth_metadata"
                ? FakeHomeserver.json(200, #"{"issuer": "https://auth.localhost/", "authorization_endpoint": "https://auth.localhost/authorize"}"#)
                : FakeHomeserver.json(404, #"{"errcode": "M_UNRECOGNIZED", "error": "Unrecognized request"}"#)
        }) { fake in
            let result = await isthmus(["login", "-c", try clientConfig(fake.url, client: "    password: hunter2\n")])
            #expect(result.status == 1)
            #expect(result.stderr == "Error: \(fake.url.absoluteString) uses OAuth 2.0 (next-generation auth) and offers no "
                    + "m.login.password login: use isthmus login --oauth\n")
            #expect(!fake.requests.contains { $0.method == "POST" }, "no login was tried")
        }
    }

    @Test func aWrongPasswordIsNamedAndNothingIsStored() async throws {
        try await serving({ request, _ in
            request.method == "POST"
                ? FakeHomeserver.json(403, #"{"errcode": "M_FORBIDDEN", "error": "Invalid username or password"}"#)
                : Self.passwordHomeserver(request, 0)
        }) { fake in
            let result = await isthmus(["login", "-c", try clientConfig(fake.url, client: "    password: wrong\n")])
            #expect(result.status == 1)
            #expect(result.stderr == "Error: the homeserver refused the login as @relay:localhost: Invalid username or password (M_FORBIDDEN)\n")
            let store = try Store(path: directory.path("isthmus.sqlite"), logger: .disabled)
            #expect(try await store.matrixSession(of: UserID("@relay:localhost")!) == nil)
        }
    }

    @Test func logoutWithoutASessionHasNothingToDo() async throws {
        let result = await isthmus("logout", "-c", try clientConfig(URL(string: "http://127.0.0.1:9")!))
        #expect(result.status == 0)
        #expect(result.stdout == "No Matrix session is stored for @relay:localhost; nothing to log out.\n")
    }

    @Test func logoutDeletesTheStoredCopyWhenTheHomeserverHadAlreadyEndedTheSession() async throws {
        try await serving({ request, _ in
            switch request.path {
            case "/_matrix/client/v3/login": Self.passwordHomeserver(request, 0)
            case "/_matrix/client/v3/refresh": FakeHomeserver.json(401, #"{"errcode": "M_UNKNOWN_TOKEN", "error": "refresh token does not exist"}"#)
            default: FakeHomeserver.json(401, #"{"errcode": "M_UNKNOWN_TOKEN", "error": "Invalid access token passed.", "soft_logout": false}"#)
            }
        }) { fake in
            let config = try clientConfig(fake.url, client: "    password: hunter2\n")
            #expect(await isthmus(["login", "-c", config]).status == 0)
            let result = await isthmus("logout", "-c", config)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "Logged out @relay:localhost: the homeserver had already ended the session of device ISTHMUSRELAY; "
                    + "the stored session is deleted.\n")
            #expect(fake.requests.map { "\($0.method) \($0.path)" }.suffix(2) == ["POST /_matrix/client/v3/logout", "POST /_matrix/client/v3/refresh"],
                    "the refresh token was tried, and no login made just to log out")
            let store = try Store(path: directory.path("isthmus.sqlite"), logger: .disabled)
            #expect(try await store.matrixSession(of: UserID("@relay:localhost")!) == nil)
        }
    }
}
