@testable import Bridge
import Foundation
import IsthmusCommon
import Matrix
import MatrixAppService
import Testing
import TestSupport

/// Typing and read markers through the whole bridge over the fakes: the appservice handler routes a transaction's
/// ephemeral events to the portal, whose sender performs them off the message path, and held-back values go out when
/// the flush timer the machine asked for fires (on a ``ManualTime`` the test moves).
@Suite struct PortalEphemeralTests {
    let room = RoomID("!room:localhost")!
    let muc = JID("lounge@conference.localhost")!
    let alice = UserID("@alice:localhost")!

    func handler(_ harness: BridgeHarness) -> BridgeAppServiceHandler {
        BridgeAppServiceHandler(bridge: harness.bridge, namespace: GhostNamespace(prefix: "_xmpp_", serverName: "localhost",
                                                                                  botLocalpart: "isthmus")!, logger: .disabled)
    }

    func ephemeralTransaction(_ id: String, _ ephemeral: String) throws -> Transaction {
        try TransactionDecoder.decode(Data(#"{"events": [], "ephemeral": [\#(ephemeral)]}"#.utf8), id: #require(TransactionID(id))).get()
    }

    @Test func matrixTypingReachesTheMUCAsChatStatesFromThePuppet() async throws {
        let time = ManualTime()
        let harness = try BridgeHarness(clock: time.timeSource)
        try await harness.link(room, to: muc, members: [alice: "Alice"])
        let puppet = try #require(harness.xmpp.state.withLock { $0.joins.first { $0.nick == "Alice" }?.occupant })
        let handler = handler(harness)
        try await handler.handle(ephemeralTransaction("t1", #"{"type": "m.typing", "room_id": "\#(room)", "content": {"user_ids": ["@alice:localhost", "@_xmpp_romeo:localhost"]}}"#))
        try await eventually("composing from alice's occupant") {
            harness.xmpp.state.withLock { $0.signals.map(\.signals) } == [ChatSignals(chatState: .composing)]
        }
        #expect(harness.xmpp.state.withLock { $0.signals.map(\.from) } == [puppet])
        // She stops within the 3 s window: paused goes out when the flush timer fires, and not before.
        try await handler.handle(ephemeralTransaction("t2", #"{"type": "m.typing", "room_id": "\#(room)", "content": {"user_ids": []}}"#))
        try await eventually("the flush scheduled") { time.sleeping == [time.now + .seconds(3)] }
        #expect(harness.xmpp.state.withLock { $0.signals.count } == 1)
        time.advance(by: .seconds(3))
        try await eventually("paused after the window") {
            harness.xmpp.state.withLock { $0.signals.map(\.signals) } == [ChatSignals(chatState: .composing), ChatSignals(chatState: .paused)]
        }
        await harness.stop()
    }

    @Test func anOccupantsChatStateAndMarkerBecomeItsGhostsTypingAndReceipt() async throws {
        let harness = try BridgeHarness()
        try await harness.link(room, to: muc, members: [alice: "Alice"])
        let message = harness.xmpp.occupantSays("romeo", "read me", in: muc)
        try await eventually("bridged") { harness.matrix.state.withLock { $0.sent.count } == 1 }
        let (ghost, event) = try #require(harness.matrix.state.withLock { $0.sent.first.map { ($0.user, $0.eventID) } })

        var composing = RoomMessage(room: muc, nick: "romeo", to: FakeXMPPLink.bot)
        composing.signals = ChatSignals(chatState: .composing)
        harness.xmpp.feed.yield(.message(composing))
        try await eventually("the ghost typing") { harness.matrix.state.withLock { $0.typing.map(\.1) } == [true] }
        #expect(harness.matrix.state.withLock { $0.typing.map(\.0) } == [ghost])

        var displayed = RoomMessage(room: muc, nick: "romeo", to: FakeXMPPLink.bot)
        displayed.signals = ChatSignals(displayed: try #require(message.stanzaID?.rawValue))
        harness.xmpp.feed.yield(.message(displayed))
        try await eventually("the ghost's receipt") { harness.matrix.state.withLock { $0.receipts.count } == 1 }
        #expect(harness.matrix.state.withLock { $0.receipts.first?.0 } == ghost)
        #expect(harness.matrix.state.withLock { $0.receipts.first?.1 } == event)
        #expect(harness.matrix.state.withLock { $0.sent.count } == 1, "neither became a message")
        await harness.stop()
    }
}
