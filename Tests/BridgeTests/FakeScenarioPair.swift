import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing
import TestSupport

/// ``ScenarioPair`` over the fake links, with the bridge running in-process on a store file that survives restarts.
/// While the bridge is stopped the fake MUC archives what its occupant says, and the fake homeserver keeps the Matrix
/// member's messages and pushes them once the bridge is back (as Synapse retries a down appservice).
actor FakeScenarioPair: ScenarioPair {
    let room = RoomID("!scenario:localhost")!
    let muc = JID("scenario@conference.localhost")!
    let alice = UserID("@alice:localhost")!
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("isthmus-scenario-\(UUID().uuidString).sqlite").path
    let matrix = FakeMatrixLink()
    private var xmpp = FakeXMPPLink()
    private var running: (store: Store, bridge: Bridge, task: Task<Void, Never>)?
    /// What earlier bridge runs sent to the MUC.
    private var sentBefore: [String] = []
    private var nextEvent = 1
    private var pushLater: [MatrixRoomEvent] = []

    init() {
        matrix.state.withLock { $0.members[room] = [alice: "Alice"] }
    }

    /// Links the pair and starts the bridge.
    func start() async throws {
        let store = try Store(path: path, logger: .disabled)
        try await store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc))
        try await run(store)
        try await eventually("link active") { try await store.roomLinks().first?.status == .active }
    }

    private func run(_ store: Store) async throws {
        let bridge = Bridge(store: store, xmpp: xmpp, matrix: matrix,
                            naming: BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!,
                            logger: .disabled, linkPollInterval: .milliseconds(20))
        let events = xmpp.events
        running = (store, bridge, Task { await bridge.run(xmppEvents: events) })
        xmpp.feed.yield(.connected(reconnected: false))
    }

    func xmppSays(_ body: String) async throws {
        _ = xmpp.occupantSays("romeo", body, in: muc)
    }

    func matrixSays(_ body: String) async throws {
        let event = MatrixRoomEvent(eventID: EventID("$s\(nextEvent)")!, room: room, sender: alice, content: .message(msgtype: .text, body: body))
        nextEvent += 1
        guard let running else {
            pushLater.append(event)
            return
        }
        try await running.bridge.acceptMatrixEvents([event], transaction: TransactionID("\(nextEvent)"))
    }

    func arrivedInMatrix(atLeast count: Int) async throws -> [String] {
        let matrix = self.matrix
        return try await eventuallyValue("\(count) messages in Matrix") {
            let bodies = matrix.state.withLock { $0.sent.map(\.message.body) }
            return bodies.count >= count ? bodies : nil
        }
    }

    func arrivedInXMPP(atLeast count: Int) async throws -> [String] {
        let xmpp = self.xmpp, before = sentBefore
        return try await eventuallyValue("\(count) messages in XMPP") {
            let bodies = before + xmpp.state.withLock { $0.sent.map(\.body) }
            return bodies.count >= count ? bodies : nil
        }
    }

    func stopBridge() async throws {
        guard let running else { return }
        running.bridge.shutdown()
        xmpp.feed.finish()
        await running.task.value
        self.running = nil
        // The next run talks to the same room (same archive and numbering) over a new connection.
        let old = xmpp
        sentBefore += old.state.withLock { $0.sent.map(\.body) }
        xmpp = FakeXMPPLink()
        let carried = old.state.withLock { ($0.archive, $0.nextStanza, $0.occupantNicks) }
        xmpp.state.withLock { $0.archive = carried.0; $0.nextStanza = carried.1; $0.occupantNicks = carried.2 }
    }

    func startBridge() async throws {
        let store = try Store(path: path, logger: .disabled)
        try await run(store)
        let pending = pushLater
        pushLater = []
        try await running?.bridge.acceptMatrixEvents(pending, transaction: TransactionID("\(nextEvent + 1000)"))
    }

    func finish() async throws {
        try await stopBridge()
        try? FileManager.default.removeItem(atPath: path)
    }
}
