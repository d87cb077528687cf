import Foundation
import IsthmusCommon
import Matrix
import MatrixAccount
import MatrixAppService
import MatrixClient
import Synchronization
import TestSupport
import Testing

/// The keeper performing the session machine over loopback: a fake homeserver that knows which tokens are valid, and
/// a vault in memory that notes each write in the same log as the homeserver's requests.
@Suite struct SessionKeeperTests {
    let user = UserID("@relay:example.org")!
    let device = DeviceID("ISTHMUSRELAY")!

    /// What happened, in order: the fake's requests (`METHOD path bearer`) and the vault's writes (`kept token`).
    final class Log: Sendable {
        let entries = Mutex<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    final class MemoryVault: SessionVault {
        let kept: Mutex<MatrixSession?>
        let log: Log
        init(_ session: MatrixSession?, log: Log) {
            kept = Mutex(session)
            self.log = log
        }
        func session(of user: UserID) async throws -> MatrixSession? { kept.withLock { $0 } }
        func keep(_ session: MatrixSession) async throws {
            log.add("kept \(session.accessToken.secret)")
            kept.withLock { $0 = session }
        }
        func forget(_ user: UserID) async throws { kept.withLock { $0 = nil } }
    }

    /// Answers whoami for `valid` tokens (401 with `soft_logout` otherwise), `/refresh` and `/login` with `answer`.
    static func homeserver(log: Log, valid: Set<String>, refresh: String = "", login: String = "") throws -> FakeHomeserver {
        try FakeHomeserver { request, _ in
            let bearer = request.authorization.map { String($0.dropFirst("Bearer ".count)) } ?? "-"
            log.add("\(request.method) \(request.path) \(bearer)")
            switch request.path {
            case "/_matrix/client/v3/refresh": return FakeHomeserver.json(200, refresh)
            case "/_matrix/client/v3/login": return FakeHomeserver.json(200, login)
            default:
                guard valid.contains(bearer) else {
                    return FakeHomeserver.json(401, #"{"errcode": "M_UNKNOWN_TOKEN", "error": "Access token has expired", "soft_logout": true}"#)
                }
                return FakeHomeserver.json(200, #"{"user_id": "@relay:example.org", "device_id": "ISTHMUSRELAY"}"#)
            }
        }
    }

    /// A client acting as the account through a keeper over `vault`, against `fake`.
    func account(_ fake: FakeHomeserver, vault: MemoryVault, password: String?) -> (MatrixClient, SessionKeeper) {
        let configuration = MatrixClient.Configuration(homeserverURL: fake.url, accessToken: "", retryPolicy: MatrixClientLoopbackTests.fast)
        let keeper = SessionKeeper(configuration: .init(userID: user, deviceID: device, canLogIn: true), password: password,
                                   client: MatrixClient(configuration: configuration, logger: .disabled), vault: vault, logger: .disabled)
        return (MatrixClient(configuration: configuration, tokens: keeper, logger: .disabled), keeper)
    }

    func serving(_ fake: FakeHomeserver, _ body: () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await fake.run() }
            defer { fake.stop() }
            try await body()
        }
    }

    @Test func concurrentCallsRefusedTogetherShareOneRefreshStoredBeforeItIsUsed() async throws {
        let log = Log()
        let far = Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000   // not due: only the homeserver's refusal renews
        let vault = MemoryVault(MatrixSession(userID: user, deviceID: device, accessToken: AccessToken("syt_old")!,
                                              refreshToken: RefreshToken("syr_old")!, expiresAt: far), log: log)
        let fake = try Self.homeserver(log: log, valid: ["syt_new"],
                                       refresh: #"{"access_token": "syt_new", "refresh_token": "syr_new", "expires_in_ms": 600000}"#)
        let (client, _) = account(fake, vault: vault, password: nil)
        try await serving(fake) {
            let owners = try await withThrowingTaskGroup(of: TokenOwner.self) { group in
                for _ in 0..<20 { group.addTask { try await client.tokenOwner() } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(owners.count == 20 && owners.allSatisfy { $0.userID == user })
            let entries = log.all
            #expect(entries.filter { $0.hasPrefix("POST /_matrix/client/v3/refresh") }.count == 1, "\(entries)")
            let kept = try #require(entries.firstIndex(of: "kept syt_new"))
            let firstUse = try #require(entries.firstIndex(of: "GET /_matrix/client/v3/account/whoami syt_new"))
            #expect(kept < firstUse, "the new pair is durable before its first use")
            #expect(entries.filter { $0 == "GET /_matrix/client/v3/account/whoami syt_new" }.count == 20)
            #expect(vault.kept.withLock { $0?.refreshToken } == RefreshToken("syr_new"))
        }
    }

    @Test func withoutAKeptSessionThePasswordLogsInOnTheConfiguredDevice() async throws {
        let log = Log()
        let vault = MemoryVault(nil, log: log)
        let fake = try Self.homeserver(log: log, valid: ["syt_a"], login: #"""
            {"user_id": "@relay:example.org", "access_token": "syt_a", "device_id": "ISTHMUSRELAY", "refresh_token": "syr_a",
             "expires_in_ms": 300000}
            """#)
        let (client, keeper) = account(fake, vault: vault, password: "hunter2")
        try await serving(fake) {
            _ = try await client.tokenOwner()
            #expect(log.all == ["POST /_matrix/client/v3/login -", "kept syt_a", "GET /_matrix/client/v3/account/whoami syt_a"])
            let body = try #require(fake.requests.first).body
            let sent = try #require(JSONSerialization.jsonObject(with: body) as? [String: Any])
            #expect(sent["device_id"] as? String == "ISTHMUSRELAY" && sent["refresh_token"] as? Bool == true)
            #expect(await keeper.session?.deviceID == device)
            #expect(vault.kept.withLock { $0?.expiresAt } != nil)
        }
    }

    @Test func withoutPasswordOrSessionACallFailsSayingWhatToDo() async throws {
        let log = Log()
        let fake = try Self.homeserver(log: log, valid: [])
        let (client, keeper) = account(fake, vault: MemoryVault(nil, log: log), password: nil)
        try await serving(fake) {
            do throws(MatrixError) {
                _ = try await client.tokenOwner()
                Issue.record("answered")
            } catch {
                #expect(error.kind == .unusable && error.message.contains("isthmus login"))
            }
            #expect(await keeper.stall == .noSession)
            #expect(log.all.isEmpty, "nothing was sent")
        }
    }

    @Test func aSoftLogoutLogsInAgainWithThePasswordOnTheSameDevice() async throws {
        let log = Log()
        let vault = MemoryVault(MatrixSession(userID: user, deviceID: DeviceID("KEPTDEVICE")!, accessToken: AccessToken("syt_old")!), log: log)
        let fake = try Self.homeserver(log: log, valid: ["syt_b"],
                                       login: #"{"user_id": "@relay:example.org", "access_token": "syt_b", "device_id": "KEPTDEVICE"}"#)
        let (client, _) = account(fake, vault: vault, password: "hunter2")
        try await serving(fake) {
            _ = try await client.tokenOwner()
            #expect(log.all == ["GET /_matrix/client/v3/account/whoami syt_old", "POST /_matrix/client/v3/login -", "kept syt_b",
                                "GET /_matrix/client/v3/account/whoami syt_b"])
            let sent = try #require(JSONSerialization.jsonObject(with: fake.requests[1].body) as? [String: Any])
            #expect(sent["device_id"] as? String == "KEPTDEVICE", "the same device, not the configured one")
        }
    }
}
