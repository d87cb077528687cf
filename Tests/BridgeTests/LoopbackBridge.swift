import Bridge
import Foundation
import IsthmusCommon
import IsthmusConfig
import IsthmusFakes
import IsthmusStore
import MatrixAppService
import Synchronization
import TestSupport

/// The whole bridge in this process, as `isthmus serve` runs it (``BridgeRuntime``: the XEP-0114 component over TCP,
/// the appservice listener, the Matrix client over libcurl, the store on a SQLite file), between the loopback fakes
/// `isthmus-bench` drives it with: ``FakeMUCServer`` and ``AnsweringHomeserver``, on the config the benchmarks write
/// (``LoopbackBridgeConfig``). One linked room, `!loop:localhost` ↔ `loop@conference.localhost`: Matrix member
/// `@alice:localhost` (a puppet in the MUC) and the simulated XMPP occupant `romeo` (a ghost in Matrix).
///
/// Matrix events reach the bridge as the homeserver sends them: a transaction `PUT` to its listener. What reaches each
/// side is recorded as the fakes see it (``Recorder``). A ``ScenarioPair``, so the shared scenarios run over sockets.
actor LoopbackBridge: ScenarioPair {
    static let room = RoomID("!loop:localhost")!
    static let muc = JID("loop@conference.localhost")!
    static let alice = UserID("@alice:localhost")!
    static let romeo = "romeo"

    let muc: FakeMUCServer
    let homeserver: AnsweringHomeserver
    let recorder: Recorder
    /// The bridge's own directory: its config's base, its SQLite store.
    let directory: TemporaryDirectory
    /// The test's connection to the bridge's store (to link the room and to read what the bridge recorded).
    let store: Store
    private var settings: LoopbackBridgeConfig
    private let fakes: [Task<Void, Never>]
    private var running: Running?
    /// Matrix events said while the bridge was stopped, pushed once it runs again (as Synapse retries a down appservice).
    private var pushLater: [String] = []
    private var nextEvent = 1
    /// Homeserver transaction ids: one increasing sequence, as Synapse numbers them.
    private var nextTransaction = 1

    /// Starts the fakes and links the room in the store (the bridge itself starts with ``startBridge()``).
    init() async throws {
        let recorder = Recorder()
        let muc = try FakeMUCServer(onGroupchat: { recorder.record($0) })
        let homeserver = try AnsweringHomeserver(onSend: { recorder.record($0) })
        homeserver.setMembers(room: Self.room.rawValue, [(Self.alice.rawValue, "Alice")], bot: "@isthmus:localhost")
        muc.addXMPPUser(room: Self.muc.description, nick: Self.romeo)
        self.recorder = recorder
        self.muc = muc
        self.homeserver = homeserver
        fakes = [Task { await muc.run() }, Task { await homeserver.run() }]
        directory = try TemporaryDirectory()
        settings = LoopbackBridgeConfig(homeserverURL: "http://127.0.0.1:\(homeserver.port)", xmppPort: muc.port,
                                        appservicePort: try LoopbackPort.unused())
        store = try Store(path: directory.path("isthmus.sqlite"), logger: .disabled)
        try await store.insertRoomLink(RoomLink(matrixRoom: Self.room, matrixAlias: nil, muc: Self.muc))
    }

    /// Runs `body` on a new pair with the bridge started, then stops the bridge and the fakes, also when `body` throws.
    static func run(_ body: (LoopbackBridge) async throws -> Void) async throws {
        let pair = try await LoopbackBridge()
        do {
            try await pair.startBridge()
            try await body(pair)
        } catch {
            try? await pair.finish()
            throw error
        }
        try await pair.finish()
    }

    /// Starts the bridge and waits until the room is bridged: the link active, the bot and alice's puppet in the MUC,
    /// romeo's ghost in the Matrix room. Events said while it was stopped are pushed then.
    func startBridge() async throws {
        guard running == nil else { return }
        // The listener's port was free when it was chosen, but anything may bind it before the bridge does (an
        // outgoing connection's ephemeral port, another test's listener): then the bridge stops at once, and starts
        // again on another port (LoopbackPort.unused() asks its callers to).
        for _ in 1..<3 {
            do {
                return try await startBridgeOnce()
            } catch where running?.exit.reason?.contains("Address already in use") == true {
                running = nil
                settings.appservicePort = try LoopbackPort.unused()
            }
        }
        try await startBridgeOnce()
    }

    private func startBridgeOnce() async throws {
        let config = try Config.parse(settings.yaml, baseDirectory: directory.path, environment: [:])
        let log = LogSink.memory()
        let (stop, stopping) = AsyncStream.makeStream(of: Void.self)
        let runtime = BridgeRuntime(config: config, logger: Logger(label: "isthmus", level: .info, sink: log))
        let exit = Running.Exit()
        let task = Task {
            do {
                try await runtime.run(until: stop)
                exit.set("returned")
            } catch {
                exit.set("threw: \(error)")
            }
        }
        running = Running(stop: stopping, task: task, exit: exit, log: log)
        let ghostsBefore = homeserver.counters.ghostMemberStates
        let (store, muc, homeserver) = (store, muc, homeserver)
        try await waitFor("the room bridged (link active, bot and puppet joined, ghost set up)") {
            try await store.roomLinks().first?.status == .active && muc.hostedOccupants == 2
                && homeserver.counters.ghostMemberStates > ghostsBefore
        }
        let pending = pushLater
        pushLater = []
        if !pending.isEmpty { try await push(pending) }
    }

    /// Stops the bridge as SIGTERM stops `serve` and waits until it has (its state stays in the store).
    func stopBridge() async throws {
        guard let running else { return }
        self.running = nil
        running.stop.yield()
        await running.task.value
        if let reason = running.exit.reason, reason != "returned" { throw TestFailure("the bridge's runtime \(reason)") }
    }

    /// Stops the bridge and the fakes.
    func finish() async throws {
        try await stopBridge()
        muc.close()
        homeserver.stop()
        for task in fakes { task.cancel() }
        await store.close()
    }

    // MARK: ScenarioPair

    /// romeo says `body` in the MUC. The fake MUC keeps no archive, so it cannot while the bridge is stopped.
    func xmppSays(_ body: String) async throws {
        guard muc.inject(room: Self.muc.description, nick: Self.romeo, body: body) else {
            throw TestFailure("romeo cannot speak: no component is connected to the fake MUC (it keeps no archive)")
        }
    }

    /// alice says `body` (`m.text`): one transaction to the bridge's listener, or, while it is stopped, kept for later.
    func matrixSays(_ body: String) async throws {
        let event = try Self.messageEvent(id: "$loop\(nextEvent)", sender: Self.alice, body: body)
        nextEvent += 1
        guard running != nil else {
            pushLater.append(event)
            return
        }
        try await push([event])
    }

    func arrivedInMatrix(atLeast count: Int) async throws -> [String] {
        let recorder = recorder
        return try await waitForValue("\(count) messages in Matrix") {
            let bodies = recorder.toMatrix.filter(\.byGhost).compactMap(\.body)
            return bodies.count >= count ? bodies : nil
        }
    }

    func arrivedInXMPP(atLeast count: Int) async throws -> [String] {
        let recorder = recorder
        return try await waitForValue("\(count) messages in the MUC") {
            let bodies = recorder.toXMPP.compactMap(\.body)
            return bodies.count >= count ? bodies : nil
        }
    }

    // MARK: Helpers

    /// The id the next ``matrixSays(_:)`` gives its event.
    var nextEventID: EventID { EventID("$loop\(nextEvent)")! }

    /// One transaction with `events` (JSON objects), pushed as the homeserver would; throws unless it is accepted.
    private func push(_ events: [String]) async throws {
        let body = Data(("{\"events\":[" + events.joined(separator: ",") + "],\"ephemeral\":[]}").utf8)
        let path = "/_matrix/app/v1/transactions/\(nextTransaction)"
        nextTransaction += 1
        let response = try await RawHTTP.request("PUT", port: settings.appservicePort, path, bearer: settings.hsToken, body: body)
        guard response.status == 200 else { throw TestFailure("PUT \(path) answered \(response.status): \(response.text)") }
    }

    /// An `m.room.message` (`m.text`) event in the room, as JSON.
    private static func messageEvent(id: String, sender: UserID, body: String) throws -> String {
        let event: [String: Any] = [
            "type": "m.room.message", "event_id": id, "room_id": room.rawValue, "sender": sender.rawValue,
            "origin_server_ts": 1_700_000_000_000, "content": ["msgtype": "m.text", "body": body],
        ]
        return String(decoding: try JSONSerialization.data(withJSONObject: event), as: UTF8.self)
    }

    /// ``eventually(_:timeout:pollEvery:_:)``, failing at once if the bridge stopped by itself, and with the bridge's
    /// warnings and errors in the failure.
    func waitFor(_ what: String, _ condition: @Sendable () async throws -> Bool) async throws {
        _ = try await waitForValue(what) { try await condition() ? true : nil }
    }

    /// ``eventuallyValue(_:timeout:pollEvery:_:)``, failing as ``waitFor(_:_:)`` does.
    func waitForValue<T: Sendable>(_ what: String, _ probe: @Sendable () async throws -> T?) async throws -> T {
        let running = self.running
        do {
            return try await eventuallyValue(what) {
                if let reason = running?.exit.reason { throw TestFailure("the bridge's runtime \(reason) by itself") }
                return try await probe()
            }
        } catch {
            let log = running?.log.records.filter { $0.level >= .warning }.suffix(20).map { LogSink.format($0) } ?? []
            let toMatrix = recorder.toMatrix.map { "\($0.userID ?? "bot") \($0.type) \($0.body.map { "\"\($0)\"" } ?? "-")" }
            throw TestFailure("\(error)\nsent to Matrix: \(toMatrix)\nsent to the MUC: \(recorder.toXMPP.compactMap(\.body))"
                              + "\nthe bridge's last warnings:\n" + log.joined(separator: "\n"))
        }
    }

    /// A bridge started by ``startBridge()``: how to stop it, its task, how it ended, its log.
    struct Running: Sendable {
        var stop: AsyncStream<Void>.Continuation
        var task: Task<Void, Never>
        var exit: Exit
        var log: LogSink

        /// How the runtime's `run` ended (nil while it runs). Thread-safe.
        final class Exit: Sendable {
            private let state = Mutex<String?>(nil)
            var reason: String? { state.withLock { $0 } }
            func set(_ reason: String) { state.withLock { $0 = reason } }
        }
    }

    /// What reached each side, as the fakes saw it. Thread-safe: the fakes record from their own tasks.
    final class Recorder: Sendable {
        /// An event the bridge sent to the homeserver (`PUT …/rooms/ROOM/send/TYPE/TXN`).
        struct Sent: Sendable {
            var room: String
            var type: String
            /// The `user_id` the appservice sent as, decoded (nil: the bot itself).
            var userID: String?
            var body: String?
            var byGhost: Bool { userID?.hasPrefix("@_xmpp_") ?? false }
        }

        private let state = Mutex<(toMatrix: [Sent], toXMPP: [FakeMUCServer.Groupchat])>(([], []))

        /// Events the bridge sent to Matrix, in order.
        var toMatrix: [Sent] { state.withLock { $0.toMatrix } }
        /// Groupchat messages the bridge sent to the MUC, in order.
        var toXMPP: [FakeMUCServer.Groupchat] { state.withLock { $0.toXMPP } }

        func record(_ message: FakeMUCServer.Groupchat) { state.withLock { $0.toXMPP.append(message) } }

        func record(_ request: HTTPServerRequest) {
            struct Content: Decodable { var body: String? }
            let segments = request.path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
            guard let rooms = segments.firstIndex(of: "rooms"), segments.count > rooms + 3 else { return }
            let sent = Sent(room: segments[rooms + 1], type: segments[rooms + 3],
                            userID: request.query.first { $0.name == "user_id" }?.value?.removingPercentEncoding,
                            body: (try? JSONDecoder().decode(Content.self, from: request.body))?.body)
            state.withLock { $0.toMatrix.append(sent) }
        }
    }
}
