import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing
import TestSupport

/// A room upgrade through the whole bridge over the fakes: the link, its portal and its ghosts move to the replacement
/// room, and both sides then talk there, once.
@Suite struct RoomUpgradePortalTests {
    let room = RoomID("!old:localhost")!
    let new = RoomID("!new:localhost")!
    let muc = JID("lounge@conference.localhost")!
    let alice = UserID("@alice:localhost")!

    @Test func aTombstoneMovesTheLinkAndThePortalAndNothingIsDoubled() async throws {
        let harness = try BridgeHarness()
        harness.matrix.state.withLock { $0.members[room] = [alice: "Alice"] }
        try await harness.store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc))
        harness.xmpp.feed.yield(.connected(reconnected: false))
        try await eventually("link active") { try await harness.store.roomLinks().first?.status == .active }
        _ = harness.xmpp.occupantSays("romeo", "before", in: muc)
        try await eventually("bridged to the old room") { harness.matrix.state.withLock { $0.sent.contains { $0.room == room } } }
        let ghost = try #require(harness.matrix.state.withLock { $0.sent.first?.user })

        harness.matrix.state.withLock { state in
            state.predecessors[new] = room
            state.members[new] = [alice: "Alice"]
        }
        let tombstone = MatrixRoomEvent(eventID: EventID("$tomb")!, room: room, sender: alice, stateKey: "",
                                        content: .tombstone(replacement: new, body: "upgraded"))
        let late = MatrixRoomEvent(eventID: EventID("$late")!, room: room, sender: alice, content: .message(msgtype: .text, body: "too late"))
        try await harness.bridge.acceptMatrixEvents([tombstone, late])
        try await eventually("the link moved") { try await harness.store.roomLinks().map(\.matrixRoom) == [new] }
        // The new room's portal activates: the bridge's occupant joins the MUC again (the room then sends the
        // occupants' presences again, as a real one does).
        try await eventually("the bridge's occupant joined again") {
            harness.xmpp.state.withLock { $0.joins.filter { $0.nick == "Matrix" }.count } == 2
        }
        // The ghost and the bot left the old room; the ghost is back in the new one once its occupant is seen.
        try await eventually("old room left") {
            harness.matrix.state.withLock { state in state.leaves.contains { $0 == (room, ghost) } && state.leaves.contains { $0 == (room, harness.matrix.botUserID) } }
        }
        harness.xmpp.feed.yield(.presence(RoomPresence(room: muc, nick: "romeo", to: FakeXMPPLink.bot, available: true)))
        try await eventually("ghost in the new room") { harness.matrix.state.withLock { $0.members[new]?[ghost] != nil } }

        _ = harness.xmpp.occupantSays("romeo", "after", in: muc)
        try await eventually("bridged to the new room") { harness.matrix.state.withLock { $0.sent.contains { $0.room == new } } }
        try await harness.bridge.acceptMatrixEvents([MatrixRoomEvent(eventID: EventID("$hi")!, room: new, sender: alice,
                                                                     content: .message(msgtype: .text, body: "hello from the new room"))])
        try await eventually("sent to the MUC") { harness.xmpp.state.withLock { $0.sent.contains { $0.body == "hello from the new room" } } }
        // A sentinel each way, then: everything once, in the right room; the old room's late message never went out.
        _ = harness.xmpp.occupantSays("romeo", "sentinel", in: muc)
        try await eventually("sentinel bridged") { harness.matrix.state.withLock { $0.sent.contains { $0.message.body == "sentinel" } } }
        let sent = harness.matrix.state.withLock { $0.sent.map { "\($0.room.rawValue) \($0.message.body)" } }
        #expect(sent == ["!old:localhost before", "!new:localhost after", "!new:localhost sentinel"])
        #expect(harness.xmpp.state.withLock { $0.sent.map(\.body) } == ["hello from the new room"])
        await harness.stop()
    }
}
