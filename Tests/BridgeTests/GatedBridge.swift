import Bridge
import IsthmusCommon
import IsthmusStore
import TestSupport

/// One linked room's bridge between the fakes, running, with its log captured: what the tests of the store's write
/// gate (full disk, locked SQLite, unreachable PostgreSQL) start from.
struct GatedBridge {
    let xmpp = FakeXMPPLink()
    let matrix = FakeMatrixLink()
    let sink = LogSink.memory()
    let bridge: Bridge
    let task: Task<Void, Never>

    /// Links `room` with `muc` in `store`, starts the bridge (store probes every `probeInterval` while its gate is
    /// closed) and waits until the link is active.
    static func start(store: Store, room: RoomID, muc: JID, members: [UserID: String?] = [:],
                      probeInterval: Duration) async throws -> GatedBridge {
        let gated = try await GatedBridge(store: store, room: room, muc: muc, members: members, probeInterval: probeInterval)
        try await eventually("link active") { try await store.roomLinks().first?.status == .active }
        return gated
    }

    private init(store: Store, room: RoomID, muc: JID, members: [UserID: String?], probeInterval: Duration) async throws {
        matrix.state.withLock { $0.members[room] = members }
        try await store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc))
        let bridge = Bridge(store: store, xmpp: xmpp, matrix: matrix,
                            naming: BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!,
                            logger: Logger(label: "isthmus", sink: sink), linkPollInterval: .milliseconds(20),
                            diskFullProbeInterval: probeInterval)
        self.bridge = bridge
        let events = xmpp.events
        task = Task { await bridge.run(xmppEvents: events) }
        xmpp.feed.yield(.connected(reconnected: false))
    }

    /// Stops the bridge and waits for it.
    func stop() async {
        bridge.shutdown()
        xmpp.feed.finish()
        await task.value
    }
}
