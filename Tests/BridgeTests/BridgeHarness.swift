import Bridge
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import TestSupport

/// A whole ``Bridge`` over the scripted fakes of both sides (``FakeXMPPLink``, ``FakeMatrixLink``) and a store
/// (in memory unless `path` is given), running until ``stop()``: the fakes tier's fixture.
struct BridgeHarness {
    let store: Store
    let xmpp = FakeXMPPLink()
    let matrix = FakeMatrixLink()
    let bridge: Bridge
    let task: Task<Void, Never>

    init(path: String = ":memory:", selfCheckInterval: Duration = .seconds(300), timelineCheckWindow: Duration = .seconds(20),
         backgroundTimelineChecks: [Duration] = [.seconds(1)], clock: TimeSource = .system,
         subscriptions: Config.SubscriptionPolicy = .none) throws {
        store = try Store(path: path, logger: .disabled)
        bridge = Bridge(store: store, xmpp: xmpp, matrix: matrix,
                        naming: BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!,
                        logger: .disabled, linkPollInterval: .milliseconds(20), selfCheckInterval: selfCheckInterval,
                        timelineCheckWindow: timelineCheckWindow, backgroundTimelineChecks: backgroundTimelineChecks,
                        clock: clock, subscriptions: subscriptions)
        let bridge = self.bridge, events = xmpp.events
        task = Task { await bridge.run(xmppEvents: events) }
    }

    /// Links `room` to `muc` with these Matrix members, connects the XMPP side and waits until the link is active.
    func link(_ room: RoomID, to muc: JID, members: [UserID: String?]) async throws {
        matrix.state.withLock { $0.members[room] = members }
        try await store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc))
        xmpp.feed.yield(.connected(reconnected: false))
        try await eventually("link active") { try await store.roomLinks().first?.status == .active }
    }

    func stop() async {
        bridge.shutdown()
        xmpp.feed.finish()
        await task.value
    }
}
