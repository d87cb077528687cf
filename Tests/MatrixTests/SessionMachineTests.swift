import Foundation
import IsthmusCommon
import Matrix
import MatrixAccount
import MatrixClient
import Testing

/// The account's session as literal chains: the homeserver's answers are the spec's JSON examples (login.yaml,
/// refresh.yaml, §"Soft logout") and Synapse's own error bodies; time is milliseconds since 1970, passed in.
@Suite struct SessionMachineTests {
    let t0: Int64 = 1_750_000_000_000
    let user = UserID("@cheeky_monkey:matrix.org")!
    let device = DeviceID("ISTHMUSRELAY")!

    /// login.yaml's example, with `refresh_token: true` asked for.
    static let login = #"""
        {"user_id": "@cheeky_monkey:matrix.org", "access_token": "abc123", "device_id": "GHTYAJCE",
         "expires_in_ms": 60000, "refresh_token": "def456",
         "well_known": {"m.homeserver": {"base_url": "https://example.org"}}}
        """#
    /// refresh.yaml's example.
    static let refresh = #"{"access_token": "a_new_token", "expires_in_ms": 60000, "refresh_token": "another_new_token"}"#

    func decode<T: Decodable>(_ json: String, as _: T.Type = T.self) throws -> T { try JSONDecoder().decode(T.self, from: Data(json.utf8)) }
    func token(_ text: String) -> AccessToken { AccessToken(text)! }
    func refreshToken(_ text: String) -> RefreshToken { RefreshToken(text)! }
    /// A 401 `M_UNKNOWN_TOKEN` body as the client reads it into a rejection of `refused`.
    func rejection(of refused: String, _ json: String) throws -> TokenRejection {
        let body: MatrixErrorBody = try decode(json)
        #expect(body.errcode == .unknownToken)
        return TokenRejection(token: token(refused), softLogout: body.softLogout == true)
    }
    /// A 4xx answer to a refresh or login.
    func refused(_ status: Int, _ json: String) throws -> CallFailure {
        let body: MatrixErrorBody = try decode(json)
        return .refused(status: status, errcode: body.errcode, softLogout: body.softLogout == true, message: body.error ?? "")
    }

    func machine(canLogIn: Bool = true) -> SessionMachine {
        SessionMachine(configuration: .init(userID: user, deviceID: device, canLogIn: canLogIn))
    }

    /// The session login.yaml's example minted at t0.
    var sessionA: MatrixSession {
        MatrixSession(userID: user, deviceID: DeviceID("GHTYAJCE")!, accessToken: token("abc123"),
                      refreshToken: refreshToken("def456"), expiresAt: t0 + 60_000)
    }

    /// A machine holding ``sessionA``, read from the vault at t0.
    func holdingA(canLogIn: Bool = true) -> SessionMachine {
        var m = machine(canLogIn: canLogIn)
        _ = m.tokenWanted(now: t0)
        _ = m.vaultRead(sessionA, now: t0)
        return m
    }

    @Test func theFirstLoginAsksForARefreshTokenStoresTheSessionThenRefreshesAt80Percent() throws {
        var m = machine()
        #expect(m.tokenWanted(now: t0) == [.readVault])
        #expect(m.tokenWanted(now: t0) == [], "a second call waits for the same read")
        #expect(m.vaultRead(nil, now: t0) == [.logIn(device, .noSession)])
        #expect(m.loggedIn(try decode(Self.login), now: t0) == [.store(sessionA)], "the answer names its device")
        #expect(m.tokenWanted(now: t0) == [], "not handed out before it is durable")
        #expect(m.stored(now: t0) == [.hand(token("abc123"))])
        #expect(m.tokenWanted(now: t0 + 47_999) == [.hand(token("abc123"))])
        #expect(m.tokenWanted(now: t0 + 48_000) == [.hand(token("abc123")), .readVault], "80 % of 60 s")
        #expect(m.tokenWanted(now: t0 + 48_001) == [.hand(token("abc123"))], "the token still works: others go on with it")
        #expect(m.vaultRead(sessionA, now: t0 + 48_010) == [.refresh(refreshToken("def456"))])
        let sessionB = MatrixSession(userID: user, deviceID: DeviceID("GHTYAJCE")!, accessToken: token("a_new_token"),
                                     refreshToken: refreshToken("another_new_token"), expiresAt: t0 + 48_020 + 60_000)
        #expect(m.refreshed(try decode(Self.refresh), now: t0 + 48_020) == [.store(sessionB)])
        #expect(m.tokenWanted(now: t0 + 48_021) == [.hand(token("abc123"))], "the new pair is not used before it is stored")
        #expect(m.stored(now: t0 + 48_030) == [.hand(token("a_new_token"))])
        #expect(m.tokenWanted(now: t0 + 48_030 + 47_992) == [.hand(token("a_new_token")), .readVault], "80 % of what was left")
    }

    @Test func aRefreshAnswerWithoutARefreshTokenKeepsTheOldOne() throws {
        var m = holdingA()
        _ = m.rejected(try rejection(of: "abc123", #"{"errcode": "M_UNKNOWN_TOKEN", "error": "Access token has expired", "soft_logout": true}"#),
                       now: t0 + 1_000)
        #expect(m.vaultRead(sessionA, now: t0 + 1_000) == [.refresh(refreshToken("def456"))])
        var expected = sessionA
        expected.accessToken = token("a_new_token")
        expected.expiresAt = t0 + 1_000 + 60_000
        #expect(m.refreshed(try decode(#"{"access_token": "a_new_token", "expires_in_ms": 60000}"#), now: t0 + 1_000) == [.store(expected)])
        #expect(expected.refreshToken == refreshToken("def456"))
        var forever = sessionA
        forever.accessToken = token("a_new_token")
        forever.expiresAt = nil
        var n = holdingA()
        _ = n.tokenWanted(now: t0 + 48_000)
        _ = n.vaultRead(sessionA, now: t0 + 48_000)
        #expect(n.refreshed(try decode(#"{"access_token": "a_new_token"}"#), now: t0 + 48_000) == [.store(forever)], "no expires_in_ms: no expiry")
        #expect(n.stored(now: t0 + 48_000) == [.hand(token("a_new_token"))])
        #expect(n.tokenWanted(now: t0 + 10_000_000) == [.hand(token("a_new_token"))], "never refreshed again")
    }

    @Test func aRefusedTokenIsRefreshedOnceForEveryCallerAndALateRefusalGetsTheNewToken() throws {
        var m = holdingA()
        let expired = try rejection(of: "abc123", #"{"errcode": "M_UNKNOWN_TOKEN", "error": "Access token has expired", "soft_logout": true}"#)
        #expect(m.rejected(expired, now: t0 + 2_000) == [.readVault])
        #expect(m.rejected(expired, now: t0 + 2_001) == [], "a second refused call waits for the same refresh")
        #expect(m.tokenWanted(now: t0 + 2_002) == [], "a refused token is not handed out")
        #expect(m.vaultRead(sessionA, now: t0 + 2_003) == [.refresh(refreshToken("def456"))])
        _ = m.refreshed(try decode(Self.refresh), now: t0 + 2_004)
        #expect(m.stored(now: t0 + 2_005) == [.hand(token("a_new_token"))])
        #expect(m.rejected(expired, now: t0 + 2_006) == [.hand(token("a_new_token"))], "refused before the renewal: the new token")
    }

    @Test func aRefreshWhoseAnswerWasLostIsTriedAgainWithTheSameRefreshToken() throws {
        var m = holdingA()
        _ = m.rejected(try rejection(of: "abc123", #"{"errcode": "M_UNKNOWN_TOKEN", "error": "Access token has expired", "soft_logout": true}"#),
                       now: t0 + 61_000)
        #expect(m.vaultRead(sessionA, now: t0 + 61_000) == [.refresh(refreshToken("def456"))])
        #expect(m.refreshFailed(.unanswered("timed out"), now: t0 + 91_000) == [.fail(.unanswered("timed out"))])
        #expect(m.tokenWanted(now: t0 + 91_001) == [.readVault], "the refused token is not handed out again")
        #expect(m.vaultRead(sessionA, now: t0 + 91_002) == [.refresh(refreshToken("def456"))], "the same refresh token")
        #expect(m.refreshFailed(.unanswered("HTTP 502"), now: t0 + 91_003) == [.fail(.unanswered("HTTP 502"))])
        #expect(m.tokenWanted(now: t0 + 91_004) == [.readVault])
        _ = m.vaultRead(sessionA, now: t0 + 91_005)
        _ = m.refreshed(try decode(Self.refresh), now: t0 + 91_006)
        #expect(m.stored(now: t0 + 91_007) == [.hand(token("a_new_token"))])
    }

    @Test func anEarlyRefreshWithoutAnswerKeepsTheWorkingTokenAndTriesAgainLater() {
        var m = holdingA()
        #expect(m.tokenWanted(now: t0 + 48_000) == [.hand(token("abc123")), .readVault])
        _ = m.vaultRead(sessionA, now: t0 + 48_000)
        #expect(m.refreshFailed(.unanswered("cannot connect"), now: t0 + 48_100) == [], "nobody was waiting")
        #expect(m.tokenWanted(now: t0 + 48_101) == [.hand(token("abc123"))])
        #expect(m.tokenWanted(now: t0 + 53_100) == [.hand(token("abc123")), .readVault], "5 s later")
        _ = m.vaultRead(sessionA, now: t0 + 53_100)
        _ = m.refreshFailed(.unanswered("cannot connect"), now: t0 + 53_200)
        #expect(m.tokenWanted(now: t0 + 60_000) == [.readVault], "expired: calls now wait for the refresh")
    }

    @Test func anotherProcessRenewedTheSessionFirst() {
        var m = holdingA()
        _ = m.tokenWanted(now: t0 + 48_000)
        var renewedElsewhere = sessionA
        renewedElsewhere.accessToken = token("syt_from_the_cli")
        renewedElsewhere.refreshToken = refreshToken("syr_from_the_cli")
        renewedElsewhere.expiresAt = t0 + 100_000
        #expect(m.vaultRead(renewedElsewhere, now: t0 + 48_000) == [.hand(token("syt_from_the_cli"))], "taken up, not refreshed")
        #expect(m.tokenWanted(now: t0 + 89_599) == [.hand(token("syt_from_the_cli"))])
        #expect(m.tokenWanted(now: t0 + 89_600) == [.hand(token("syt_from_the_cli")), .readVault])
        #expect(m.vaultRead(renewedElsewhere, now: t0 + 89_600) == [.refresh(refreshToken("syr_from_the_cli"))])
    }

    @Test func aSessionThatCouldNotBeStoredIsNotUsedAndTheOldRefreshTokenIsTradedAgain() throws {
        var m = holdingA()
        _ = m.rejected(try rejection(of: "abc123", #"{"errcode": "M_UNKNOWN_TOKEN", "error": "Access token has expired", "soft_logout": true}"#),
                       now: t0 + 61_000)
        _ = m.vaultRead(sessionA, now: t0 + 61_000)
        _ = m.refreshed(try decode(Self.refresh), now: t0 + 61_000)
        #expect(m.storeFailed("disk full", now: t0 + 61_001) == [.fail(.store("disk full"))])
        #expect(m.tokenWanted(now: t0 + 61_002) == [.readVault])
        #expect(m.vaultRead(sessionA, now: t0 + 61_002) == [.refresh(refreshToken("def456"))])
    }

    @Test func aSoftLogoutWithAPasswordLogsInAgainOnTheSameDevice() throws {
        var m = machine()
        _ = m.tokenWanted(now: t0)
        _ = m.vaultRead(nil, now: t0)
        _ = m.loggedIn(try decode(#"{"user_id": "@cheeky_monkey:matrix.org", "access_token": "abc123", "device_id": "GHTYAJCE"}"#), now: t0)
        #expect(m.stored(now: t0) == [.hand(token("abc123"))])
        #expect(m.tokenWanted(now: t0 + 86_400_000) == [.hand(token("abc123"))], "no expires_in_ms: no expiry")
        let soft = try rejection(of: "abc123", #"{"errcode": "M_UNKNOWN_TOKEN", "error": "Soft logged out", "soft_logout": true}"#)
        #expect(m.rejected(soft, now: t0 + 90_000_000) == [.logIn(DeviceID("GHTYAJCE")!, .softLogout)], "no refresh token: a login")
        #expect(m.loggedIn(try decode(Self.login), now: t0 + 90_000_001) == [.store(MatrixSession(
            userID: user, deviceID: DeviceID("GHTYAJCE")!, accessToken: token("abc123"), refreshToken: refreshToken("def456"),
            expiresAt: t0 + 90_000_001 + 60_000))])
        #expect(m.stored(now: t0 + 90_000_002) == [.hand(token("abc123"))])

        var r = holdingA()
        _ = r.rejected(soft, now: t0 + 1_000)
        _ = r.vaultRead(sessionA, now: t0 + 1_000)
        #expect(r.refreshFailed(try refused(401, #"{"errcode": "M_UNKNOWN_TOKEN", "error": "Soft logged out", "soft_logout": true}"#),
                                now: t0 + 1_001) == [.logIn(DeviceID("GHTYAJCE")!, .softLogout)], "a refresh refused softly: a login")
    }

    @Test func aSoftLogoutWithoutAPasswordWaitsForTheOperatorsNewSession() throws {
        var m = holdingA(canLogIn: false)
        let soft = try rejection(of: "abc123", #"{"errcode": "M_UNKNOWN_TOKEN", "error": "Soft logged out", "soft_logout": true}"#)
        _ = m.rejected(soft, now: t0 + 1_000)
        _ = m.vaultRead(sessionA, now: t0 + 1_000)
        let stall = SessionStall.softLoggedOut
        #expect(m.refreshFailed(try refused(401, #"{"errcode": "M_UNKNOWN_TOKEN", "error": "Soft logged out", "soft_logout": true}"#),
                                now: t0 + 1_001) == [.tellOperator(stall), .fail(.stalled(stall))], "kept: a new login keeps the device")
        #expect(m.tokenWanted(now: t0 + 5_000) == [.fail(.stalled(stall))])
        #expect(m.tokenWanted(now: t0 + 11_001) == [.readVault], "10 s later: has the operator logged in?")
        #expect(m.vaultRead(sessionA, now: t0 + 11_001) == [.fail(.stalled(stall))], "the old session is no new one")
        #expect(m.tokenWanted(now: t0 + 21_001) == [.readVault])
        var fromSSO = sessionA
        fromSSO.accessToken = token("syt_sso")
        fromSSO.refreshToken = refreshToken("syr_sso")
        fromSSO.expiresAt = t0 + 21_001 + 300_000
        #expect(m.vaultRead(fromSSO, now: t0 + 21_001) == [.hand(token("syt_sso"))])
    }

    @Test func aHardRefusalOfTheRefreshEndsTheSession() throws {
        let hard = try refused(403, #"{"errcode": "M_FORBIDDEN", "error": "refresh token isn't valid anymore"}"#)
        var m = holdingA()
        _ = m.tokenWanted(now: t0 + 48_000)
        _ = m.vaultRead(sessionA, now: t0 + 48_000)
        #expect(m.refreshFailed(hard, now: t0 + 48_001) == [.logIn(DeviceID("GHTYAJCE")!, .loggedOut)], "with a password: a login")
        #expect(m.tokenWanted(now: t0 + 48_002) == [], "the old token is not used during the login")

        var n = holdingA(canLogIn: false)
        _ = n.rejected(try rejection(of: "abc123", #"{"errcode": "M_UNKNOWN_TOKEN", "error": "Invalid access token passed.", "soft_logout": false}"#),
                       now: t0 + 1_000)
        _ = n.vaultRead(sessionA, now: t0 + 1_000)
        #expect(n.refreshFailed(try refused(401, #"{"errcode": "M_UNKNOWN_TOKEN", "error": "refresh token does not exist"}"#), now: t0 + 1_001)
                == [.forget, .tellOperator(.loggedOut), .fail(.stalled(.loggedOut))])
        #expect(n.tokenWanted(now: t0 + 11_001) == [.readVault])
        #expect(n.vaultRead(nil, now: t0 + 11_001) == [.fail(.stalled(.loggedOut))])
    }

    /// An OAuth 2.0 session whose refresh the authorization server refuses (RFC 6749 §5.2 `invalid_grant`) is not
    /// replaced by a password login, even with a password configured: only `isthmus login --oauth` makes a new one.
    @Test func aRefusedOAuthRefreshWaitsForTheOperatorEvenWithAPassword() throws {
        var oauth = sessionA
        oauth.authAPI = .oauth
        oauth.oauthClientID = "01CLIENT"
        var m = machine(canLogIn: true)
        _ = m.tokenWanted(now: t0)
        _ = m.vaultRead(oauth, now: t0)
        _ = m.tokenWanted(now: t0 + 48_000)
        _ = m.vaultRead(oauth, now: t0 + 48_000)
        #expect(m.refreshFailed(.refused(status: 400, errcode: nil, softLogout: false, message: "invalid_grant"), now: t0 + 48_001)
                == [.forget, .tellOperator(.loggedOut), .fail(.stalled(.loggedOut))])
        #expect(SessionStall.loggedOut.description.contains("--oauth"))
    }

    @Test func aRefusedPasswordWaitsForTheOperator() throws {
        var m = machine()
        _ = m.tokenWanted(now: t0)
        _ = m.vaultRead(nil, now: t0)
        let stall = SessionStall.loginRefused(.forbidden, "Invalid username or password")
        #expect(m.loginFailed(try refused(403, #"{"errcode": "M_FORBIDDEN", "error": "Invalid username or password"}"#), now: t0)
                == [.tellOperator(stall), .fail(.stalled(stall))])
        #expect(stall.description.contains("matrix.client.password"))
    }

    @Test func aLoginWithoutAnswerIsTriedAgainByTheNextCall() {
        var m = machine()
        _ = m.tokenWanted(now: t0)
        _ = m.vaultRead(nil, now: t0)
        #expect(m.loginFailed(.unanswered("HTTP 503"), now: t0) == [.fail(.unanswered("HTTP 503"))])
        #expect(m.tokenWanted(now: t0 + 1) == [.readVault], "the vault first: `isthmus login` may have made a session meanwhile")
        #expect(m.vaultRead(nil, now: t0 + 1) == [.logIn(device, .noSession)])
    }

    @Test func aKeptSessionIsTakenUpAtStartAndOneAlreadyExpiredIsRefreshedFirst() {
        var m = machine()
        _ = m.tokenWanted(now: t0)
        #expect(m.vaultRead(sessionA, now: t0 + 10_000) == [.hand(token("abc123"))])
        #expect(m.tokenWanted(now: t0 + 10_000 + 39_999) == [.hand(token("abc123"))])
        #expect(m.tokenWanted(now: t0 + 10_000 + 40_000) == [.hand(token("abc123")), .readVault], "80 % of the 50 s left")

        var late = machine()
        _ = late.tokenWanted(now: t0)
        #expect(late.vaultRead(sessionA, now: t0 + 60_000) == [.readVault], "expired while the bridge was down")
        #expect(late.vaultRead(sessionA, now: t0 + 60_000) == [.refresh(refreshToken("def456"))])
    }

    @Test func nothingKeptAndNoPasswordStalls() {
        var m = machine(canLogIn: false)
        _ = m.tokenWanted(now: t0)
        var otherAccount = sessionA
        otherAccount.userID = UserID("@someone_else:matrix.org")!
        #expect(m.vaultRead(otherAccount, now: t0) == [.tellOperator(.noSession), .fail(.stalled(.noSession))],
                "another account's session is not used")
    }

    @Test func aLoginAnsweringForAnotherAccountStalls() throws {
        var m = machine()
        _ = m.tokenWanted(now: t0)
        _ = m.vaultRead(nil, now: t0)
        let other = try decode(#"{"user_id": "@other:matrix.org", "access_token": "x", "device_id": "D"}"#, as: LoginResponse.self)
        let stall = SessionStall.otherAccount(UserID("@other:matrix.org")!)
        #expect(m.loggedIn(other, now: t0) == [.tellOperator(stall), .fail(.stalled(stall))])
    }

    @Test func tokensNeverPrint() {
        let secret = token("syt_cmVsYXk_secretsecret_0a1b2c")
        #expect(!"\(secret)".contains("secret"))
        #expect(!String(reflecting: sessionA).contains("abc123"))
        #expect(!String(reflecting: sessionA).contains("def456"))
        #expect("\(secret)" == "\("\(secret)")" && "\(secret)".hasPrefix("AccessToken(sha256:"))
    }
}
