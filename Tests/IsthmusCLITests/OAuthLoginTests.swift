import Foundation
import FoundationNetworking
import Bridge
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import MatrixAccount
import MatrixClient
import TestSupport
import Testing

/// `isthmus login --oauth`, `serve`'s refresh and `logout` against a homeserver that moved to OAuth 2.0. Matrix
/// Authentication Service — what such homeservers run — cannot be installed here, so the authorization server is
/// ``FakeAuthorizationServer``, a test double that follows the specs (RFC 7591, RFC 8628, RFC 6749 with RFC 7636,
/// RFC 7009, and the client-server API's scopes).
@Suite struct OAuthLoginTests {
    let directory: TemporaryDirectory
    let relay = UserID("@relay:localhost")!

    init() throws {
        directory = try TemporaryDirectory()
    }

    func config(_ server: FakeAuthorizationServer, client: String = "") throws -> String {
        try directory.write("""
            matrix:
              homeserver_url: \(server.url.absoluteString)
              server_name: localhost
              mode: client
              client:
                user_id: "\(relay)"
            \(client)xmpp:
              component_domain: bridge.localhost
              component_secret: component-secret
            database:
              path: isthmus.sqlite

            """, to: "isthmus.yaml")
    }

    func serving(_ server: FakeAuthorizationServer, _ body: () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await server.run() }
            defer { server.stop() }
            try await body()
        }
    }

    /// The user code `login --oauth` prints (`… and enter the code ABCD-EFGH).`), once it has. The deadline is generous:
    /// the whole suite runs at once on two cores, and its start can take 20 s of wall time for anything to move.
    static func printedUserCode(_ output: OutputCapture) async throws -> String {
        try await eventuallyValue("the command prints the code", timeout: 120) {
            output.outputLines.first { $0.contains("and enter the code ") }.flatMap { $0.split(separator: " ").last }
                .map { String($0.dropLast(2)) }
        }
    }

    func keptSession() async throws -> MatrixSession? {
        let store = try Store(path: directory.url.appendingPathComponent("isthmus.sqlite").path, logger: .disabled)
        defer { Task { await store.close() } }
        return try await StoreSessionVault(store: store).session(of: relay)
    }

    /// The device authorization grant, as a headless bridge uses it: the command prints a URL and a code, someone
    /// approves it elsewhere, the command's polls get the tokens; they are checked with whoami and kept with the
    /// client id. Then the keeper refreshes the expired session at the token endpoint (rotation), and logout revokes it.
    @Test func theDeviceGrantLogsInAndServeRefreshesAndLogoutRevokes() async throws {
        let server = try FakeAuthorizationServer(userID: relay.rawValue, interval: 1)
        let path = try config(server, client: "    device_id: ISTHMUSOAUTH1\n")
        try await serving(server) {
            let output = OutputCapture()
            async let login = isthmus(["login", "--oauth", "-c", path], output: output)
            let code = try await Self.printedUserCode(output)
            #expect(output.outputLines.first == "To sign in as @relay:localhost, open \(server.url.absoluteString)/link?code=\(code)")
            #expect(server.approve(userCode: code))
            let result = await login
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.output.outputLines.contains(
                "Logged in as @relay:localhost on device ISTHMUSOAUTH1 through OAuth 2.0; the session is stored in the database."))
            #expect(server.registeredClients == 1)
            #expect(server.lastGrantedScope == "urn:matrix:client:api:* urn:matrix:client:device:ISTHMUSOAUTH1")
            let kept = try #require(try await keptSession())
            #expect(kept.authAPI == .oauth && kept.deviceID == DeviceID("ISTHMUSOAUTH1") && kept.oauthClientID != nil)
            #expect(!result.stdout.contains(kept.accessToken.secret) && !result.stdout.contains(kept.refreshToken?.secret ?? "-"))

            // serve's client, once the access token has expired (as the store says): the keeper refreshes it at the
            // token endpoint.
            let loaded = try Config.load(path: path, environment: [:])
            let store = try Store(path: directory.url.appendingPathComponent("isthmus.sqlite").path, logger: .disabled)
            var expired = kept
            expired.expiresAt = Int64(Date().timeIntervalSince1970 * 1000) - 1
            try await StoreSessionVault(store: store).keep(expired)
            let (client, _) = AccountClient.make(loaded, try #require(loaded.matrix.client), store: store, logger: .disabled)
            let owner = try await client.tokenOwner()
            #expect(owner.userID == relay && owner.deviceID == DeviceID("ISTHMUSOAUTH1"))
            #expect(server.tokenRequests[FakeAuthorizationServer.GrantType.refreshToken] == 1)
            let refreshed = try #require(try await keptSession())
            #expect(refreshed.accessToken != kept.accessToken && refreshed.refreshToken != kept.refreshToken, "rotated and kept")
            #expect(server.isRevoked(accessToken: kept.accessToken.secret), "the old access token died with the refresh")
            await store.close()

            let logout = await isthmus("logout", "-c", path)
            #expect(logout.status == 0, "\(logout.stderr)")
            #expect(logout.output.outputLines == [
                "Logged out @relay:localhost: the authorization server revoked the session of device ISTHMUSOAUTH1; the stored session is deleted.",
            ])
            #expect(server.isRevoked(accessToken: refreshed.accessToken.secret))
            #expect(server.liveSessions == 0)
            #expect(try await keptSession() == nil)
        }
    }

    /// Without the device grant: the authorization code grant with PKCE — the command prints a URL, the browser (here
    /// URLSession, following the redirect) signs in and lands on the command's loopback listener with the code.
    @Test func withoutTheDeviceGrantABrowserSignsInThroughTheLoopbackRedirect() async throws {
        let server = try FakeAuthorizationServer(userID: relay.rawValue, offersDeviceGrant: false)
        let path = try config(server)
        try await serving(server) {
            let output = OutputCapture()
            async let login = isthmus(["login", "--oauth", "-c", path], output: output)
            let printed = try await eventuallyValue("the command prints the authorization URL", timeout: 120) {
                output.outputLines.first { $0.hasPrefix(server.url.absoluteString + "/oauth2/authorize?") }
            }
            #expect(printed.contains("code_challenge_method=S256") && printed.contains("response_type=code"))
            let (page, response) = try await URLSession.shared.data(from: try #require(URL(string: printed)))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(response.url?.host == "127.0.0.1" && response.url?.port != server.port, "the browser ended at the command's listener")
            #expect(String(decoding: page, as: UTF8.self) == "Signed in: isthmus login goes on in the terminal. You can close this page.\n")
            let result = await login
            #expect(result.status == 0, "\(result.stderr)")
            #expect(server.tokenRequests[FakeAuthorizationServer.GrantType.authorizationCode] == 1)
            #expect(server.tokenRequests[FakeAuthorizationServer.GrantType.deviceCode] == nil)
            let kept = try #require(try await keptSession())
            #expect(kept.authAPI == .oauth && kept.deviceID.isOAuthCompatible, "a generated device id OAuth accepts")
        }
    }

    /// A denied sign-in ends the command with what happened; nothing is kept. A homeserver without OAuth 2.0 says so.
    @Test func aDeniedSignInKeepsNothingAndAHomeserverWithoutOAuthSaysSo() async throws {
        let server = try FakeAuthorizationServer(userID: relay.rawValue)
        let path = try config(server)
        try await serving(server) {
            let output = OutputCapture()
            async let login = isthmus(["login", "--oauth", "-c", path], output: output)
            let code = try await Self.printedUserCode(output)
            #expect(server.deny(userCode: code))
            let result = await login
            #expect(result.status == 1)
            #expect(result.output.errorLines == ["Error: no session: the sign-in was denied; run isthmus login --oauth again"])
            #expect(try await keptSession() == nil)
        }
        let plain = try FakeHomeserver(respond: { _, _ in
            FakeHomeserver.json(404, #"{"errcode": "M_UNRECOGNIZED", "error": "Unrecognized request"}"#)
        })
        let plainConfig = try directory.write("""
            matrix:
              homeserver_url: \(plain.url.absoluteString)
              server_name: localhost
              mode: client
              client:
                user_id: "\(relay)"
            xmpp:
              component_domain: bridge.localhost
              component_secret: component-secret
            database:
              path: other.sqlite

            """, to: "plain.yaml")
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await plain.run() }
            defer { plain.stop() }
            let result = await isthmus("login", "--oauth", "-c", plainConfig)
            #expect(result.status == 1)
            #expect(result.output.errorLines == [
                "Error: \(plain.url.absoluteString) does not use OAuth 2.0 (it has no auth_metadata): log in with a password or --sso",
            ])
        }
    }
}
