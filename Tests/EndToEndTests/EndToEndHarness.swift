import Foundation
import IsthmusCommon
import IsthmusStore
import TestSupport
import XCTest
import XMPP

/// One end-to-end scenario's world: the test bed, a private bridge config and database (SQLite in the scenario's
/// folder, or with `ISTHMUS_TEST_DATABASE=postgres` a PostgreSQL database of its own: ``EndToEndDatabase``), the
/// `serve` process, and helpers to act as real users on both sides. Rooms get unique names so scenarios never see
/// each other.
final class EndToEndHarness: @unchecked Sendable {
    let bed: TestBed
    let directory: URL
    let config: URL
    /// The scenario's store; released (a PostgreSQL database dropped) after the bridge is killed in `deinit`.
    let database: EndToEndDatabase
    private(set) var bridge: BridgeProcess?
    private var serveCount = 0
    let suffix = String(UUID().uuidString.prefix(8)).lowercased()

    /// A scenario named `name` (its folder, its rooms' suffix), its store on `database` when given, else on
    /// `ISTHMUS_TEST_DATABASE`'s backend.
    init(_ name: String, database backend: StoreBackend? = nil) throws {
        bed = try TestBed.fromEnvironment()
        directory = bed.directory.appendingPathComponent("e2e-\(name)-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        config = directory.appendingPathComponent("isthmus.yaml")
        // Same servers and secrets; the relative database path now resolves to this scenario's own folder, or the
        // database section names the scenario's own PostgreSQL database.
        database = try EndToEndDatabase(backend: backend)
        let bedConfig = try String(contentsOf: bed.configFile, encoding: .utf8)
        try database.configured(bedConfig).write(to: config, atomically: true, encoding: .utf8)
        BridgeLogReporter.shared.watch(directory)
    }

    /// The bridge's Matrix user: the appservice's bot, or in Matrix client mode the config's account.
    var botUserID: String {
        let text = (try? String(contentsOf: config, encoding: .utf8)) ?? ""
        guard let key = text.range(of: "\n    user_id: \"@") else { return "@isthmus:localhost" }
        let rest = text[text.index(before: key.upperBound)...]
        return String(rest.prefix { $0 != "\"" })
    }
    var configPath: String { config.path }

    /// Where this scenario's store is (to read or shape it while `serve` is stopped).
    var storeLocation: DatabaseLocation {
        database.postgresLocation ?? .sqlite(path: directory.appendingPathComponent("isthmus.sqlite").path)
    }

    /// Runs an `isthmus` subcommand with this scenario's config.
    func cli(_ arguments: String...) throws -> BridgeProcess.Result {
        try BridgeProcess.run(arguments + ["-c", config.path])
    }

    /// Rewrites this scenario's config file (e.g. to turn JSON logs on); fails when the change does nothing.
    func editConfig(_ change: (String) -> String) throws {
        let text = try String(contentsOf: config, encoding: .utf8)
        let changed = change(text)
        XCTAssertNotEqual(changed, text, "the config edit changed nothing")
        try changed.write(to: config, atomically: true, encoding: .utf8)
    }

    /// Starts `isthmus serve` and waits until it is connected to both servers.
    func startBridge() async throws {
        serveCount += 1
        let process = try BridgeProcess(config: config, logFile: directory.appendingPathComponent("serve-\(serveCount).log"))
        bridge = process
        try await eventually("bridge connected to both servers (log: \(process.logFile.path))", timeout: 30) {
            guard process.isRunning else { throw BridgeExited(log: process.log) }
            let log = process.log
            // An application service is pinged; an ordinary account (Matrix client mode) syncs.
            return log.contains("XMPP link up")
                && (log.contains("Homeserver reaches the bridge") || log.contains("Syncing as the bridge's Matrix account"))
        }
        try assertStoreBackend()
    }

    /// On PostgreSQL: the scenario's database holds every migration and no SQLite file was made beside the config,
    /// so a run that quietly fell back to SQLite cannot pass as a PostgreSQL one.
    private func assertStoreBackend() throws {
        guard let location = database.postgresLocation else { return }
        let diagnosis = try Store.diagnose(location)
        XCTAssertEqual(diagnosis.backend, .postgresql)
        XCTAssertEqual(diagnosis.applied, diagnosis.known, "serve migrated the scenario's PostgreSQL database")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("isthmus.sqlite").path),
                       "no SQLite store beside the config on a PostgreSQL run")
    }

    /// SIGTERM and a clean exit.
    func stopBridge() {
        if let bridge { XCTAssertEqual(bridge.stop(), 0, "serve exits 0 after SIGTERM; log:\n\(bridge.log.suffix(3000))") }
        bridge = nil
    }

    /// SIGKILL: a crash.
    func crashBridge() {
        bridge?.kill9()
        bridge = nil
    }

    struct BridgeExited: Error, CustomStringConvertible {
        var log: String
        var description: String { "isthmus serve exited early:\n\(log.suffix(4000))" }
    }

    /// A MUC JID unique to this scenario.
    func muc(_ name: String) -> JID { JID("\(name)-\(suffix)@\(bed.mucDomain)")! }

    /// Logs a Matrix test user in.
    func matrixUser(_ localpart: String) async throws -> MatrixTestUser {
        try await MatrixTestUser.login(localpart, bed: bed)
    }

    /// Connects an XMPP test user (c2s).
    func xmppUser(_ localpart: String) async throws -> XMPPTestClient {
        try await XMPPTestClient.connect(port: bed.c2sPort, user: localpart, domain: bed.xmppDomain, password: bed.password)
    }

    /// `isthmus links --json`, decoded.
    func links() throws -> [[String: String]] {
        let result = try cli("links", "--json")
        XCTAssertEqual(result.status, 0, result.stderr)
        let array = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] ?? []
        return array.map { $0.compactMapValues { $0 as? String } }
    }

    /// Waits until the link of `room` has `status`.
    func waitForLink(_ room: String, status: String, timeout: Double = 20) async throws {
        try await eventually("link \(room) \(status)", timeout: timeout) {
            try self.links().contains { $0["matrix_room"] == room && $0["status"] == status }
        }
    }

    /// Creates a Matrix room owned by `owner` with an alias, invites the bot, links it with `muc` through the CLI and
    /// waits until the running bridge reports it active. Returns the room id.
    func linkedRoom(owner: MatrixTestUser, muc: JID, alias: String? = nil, byAlias: Bool = true) async throws -> String {
        let aliasLocalpart = alias ?? "room-\(suffix)-\(muc.localpart ?? "x")"
        let room = try await owner.createRoom(aliasLocalpart: aliasLocalpart, invite: [botUserID])
        let target = byAlias ? "#\(aliasLocalpart):localhost" : room
        let result = try cli("link", target, muc.description)
        XCTAssertEqual(result.status, 0, "link failed: \(result.stderr)")
        try await waitForLink(room, status: "active")
        return room
    }

    /// The m.room.message events in `room` sent by anyone but `excluding`, once there are at least `count`.
    func matrixMessages(_ user: MatrixTestUser, in room: String, count: Int, excluding sender: String? = nil,
                        timeout: Double = 30) async throws -> [MatrixTestUser.Event] {
        try await eventuallyValue("\(count) messages in \(room)", timeout: timeout) {
            let found = try await user.messages(in: room).filter { $0.sender != sender }
            return found.count >= count ? found : nil
        }
    }

    /// The m.room.message events in `room` sent by anyone but `excluding`, once one of them has the body `sentinel`
    /// (send it after everything else: anything doubled or echoed before it is then in the list).
    func matrixMessages(_ user: MatrixTestUser, in room: String, untilBody sentinel: String, excluding sender: String? = nil,
                        timeout: Double = 30) async throws -> [MatrixTestUser.Event] {
        try await eventuallyValue("\(sentinel.debugDescription) in \(room)", timeout: timeout) {
            let found = try await user.messages(in: room).filter { $0.sender != sender }
            return found.contains { $0.body == sentinel } ? found : nil
        }
    }

    /// Collects the groupchat messages with a body from `room` received by `client`, sent by nicks other than
    /// `excluding`, up to and including the one with the body `sentinel`.
    func xmppMessages(_ client: XMPPTestClient, from room: JID, untilBody sentinel: String, excludingNick nick: String? = nil,
                      timeout: Double = 30) async throws -> [Message] {
        var messages: [Message] = []
        while messages.last?.body != sentinel {
            messages.append(try await client.nextMessage(within: timeout, "\(sentinel.debugDescription) in \(room)") {
                $0.type == .groupchat && $0.from?.bare == room.bare && $0.body != nil && $0.from?.resource != nick
            })
        }
        return messages
    }

    /// Collects `count` groupchat messages with a body from `room` received by `client`, sent by nicks other than `excluding`.
    func xmppMessages(_ client: XMPPTestClient, from room: JID, count: Int, excludingNick nick: String? = nil,
                      timeout: Double = 30) async throws -> [Message] {
        var messages: [Message] = []
        while messages.count < count {
            let message = try await client.nextMessage(within: timeout, "groupchat \(messages.count + 1) of \(count) in \(room)") {
                $0.type == .groupchat && $0.from?.bare == room.bare && $0.body != nil && $0.from?.resource != nick
            }
            messages.append(message)
        }
        return messages
    }

    deinit {
        bridge?.kill9()
    }
}
