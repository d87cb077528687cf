import Foundation
import IsthmusCommon
import MatrixAppService
import Synchronization

/// A test double of a Matrix homeserver that delegates its logins to an OAuth 2.0 authorization server
/// ("next-generation auth", client-server API v1.15+ §"OAuth 2.0 API", up to v1.18), both served on one loopback
/// listener (plain http, random port) built on the project's ``HTTPServer``. It stands in for Matrix Authentication
/// Service, which cannot be installed in the test environment, and follows the specs the bridge must follow with MAS:
///
/// - `GET /_matrix/client/v1/auth_metadata`: RFC 8414 metadata, the issuer being ``url`` + `/`;
///   `GET /_matrix/client/v3/login` is 404 `M_UNRECOGNIZED` (no legacy login);
/// - `POST /oauth2/registration`: dynamic registration of public native clients (RFC 7591);
/// - `POST /oauth2/device` and the device code grant (RFC 8628), with `slow_down` when polled sooner than the interval;
/// - `GET /oauth2/authorize` with PKCE S256 (RFC 6749 §4.1, RFC 7636): the user "signs in and consents" at once, the
///   answer is a 302 back to the loopback redirect URI (any port, RFC 8252 §7.3);
/// - `POST /oauth2/token`: device code, authorization code and refresh token grants. A refresh rotates both tokens
///   and the old access token dies at once; re-using a rotated refresh token revokes the whole session;
/// - `POST /oauth2/revoke` (RFC 7009), and `GET /_matrix/client/v3/account/whoami` for the tokens it issued
///   (`soft_logout: true` once an access token's lifetime has passed).
///
/// The user's side of the device flow is the test's: ``approve(userCode:)``, ``deny(userCode:)``, ``expire(userCode:)``.
/// Time comes from the injected ``TimeSource`` (a test can pass a manual one). All state sits in one `Mutex`;
/// ``run()`` serves until ``stop()``. Thread-safe.
public final class FakeAuthorizationServer: Sendable {
    /// The listener (bound in `init`).
    public let server: HTTPServer
    public var port: Int { server.port }
    /// The homeserver's base URL, `http://127.0.0.1:PORT`; the issuer is this plus `/`.
    public var url: URL { URL(string: "http://127.0.0.1:\(server.port)")! }
    let settings: Settings
    let time: TimeSource
    let state = Mutex(State())

    /// Binds a loopback port (I/O). `userID` is the Matrix user every login signs in; access tokens last
    /// `accessTokenLifetime` seconds; `offersDeviceGrant` adds the device authorization endpoint and grant; device
    /// polls must be `interval` seconds apart (the spec's default is 5; 1 keeps tests fast), and each `slow_down`
    /// adds `slowDownIncrement` seconds to it (RFC 8628 §3.5 says 5).
    public init(userID: String, accessTokenLifetime: Int = 300, offersDeviceGrant: Bool = true, interval: Int = 1,
                slowDownIncrement: Int = 5, time: TimeSource = .system) throws {
        server = try HTTPServer(configuration: .init(host: "127.0.0.1", port: 0), logger: .disabled)
        settings = Settings(userID: userID, accessTokenLifetime: accessTokenLifetime, offersDeviceGrant: offersDeviceGrant,
                            interval: interval, slowDownIncrement: slowDownIncrement)
        self.time = time
    }

    /// Serves until ``stop()``.
    public func run() async {
        for await request in server.requests {
            request.respond(answer(request))
        }
    }

    /// Stops serving and closes the listener (unanswered requests get 503). Idempotent.
    public func stop() {
        server.stopAccepting()
        server.close()
    }

    // MARK: The user's side of the device flow (test hooks)

    /// The user approves the pending device authorization showing `userCode` (case and dashes ignored). False when none
    /// is pending.
    @discardableResult
    public func approve(userCode: String) -> Bool { state.withLock { $0.decide(userCode: userCode, .approved) } }

    /// The user refuses it: the next poll gets `access_denied`.
    @discardableResult
    public func deny(userCode: String) -> Bool { state.withLock { $0.decide(userCode: userCode, .denied) } }

    /// It expires before the user answers: the next poll gets `expired_token`.
    @discardableResult
    public func expire(userCode: String) -> Bool { state.withLock { $0.decide(userCode: userCode, .expired) } }

    // MARK: Introspection

    /// How many clients registered.
    public var registeredClients: Int { state.withLock { $0.clients.count } }

    /// Requests to the token endpoint so far, by their `grant_type` (as sent, even when refused).
    public var tokenRequests: [String: Int] { state.withLock { $0.tokenRequests } }

    /// Whether `accessToken` was issued here and no longer works for a reason other than expiry: its session was
    /// revoked, or a refresh replaced it.
    public func isRevoked(accessToken: String) -> Bool {
        state.withLock { state in
            guard let index = state.accessOwners[accessToken] else { return false }
            return state.sessions[index].revoked || state.sessions[index].accessToken != accessToken
        }
    }

    /// Sessions not revoked (an expired access token leaves its session live: a refresh revives it).
    public var liveSessions: Int { state.withLock { $0.sessions.count { !$0.revoked } } }

    /// The scope of the last token pair issued by a device or code grant (refreshes keep it).
    public var lastGrantedScope: String? { state.withLock { $0.lastScope } }

    /// The seconds the client must now wait between polls of the device authorization showing `userCode` (it grows at
    /// each `slow_down`); nil when there is none.
    public func pollInterval(userCode: String) -> Int? {
        let wanted = State.normalized(userCode)
        return state.withLock { $0.deviceGrants.values.first { State.normalized($0.userCode) == wanted }?.interval }
    }
}
