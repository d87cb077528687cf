@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import MatrixAccount
import MatrixAppService
import Testing
import TestSupport

/// The bridge's counters against scripted fakes: once per delivered message, whatever the duplicates and retries.
@Suite struct BridgeMetricsTests {
    let room = RoomID("!room:localhost")!
    let muc = JID("lounge@conference.localhost")!
    let alice = UserID("@alice:localhost")!

    func scrape(_ harness: BridgeHarness) throws -> MetricsScrape { try MetricsScrape(harness.bridge.metrics.exposition()) }

    func linked(_ harness: BridgeHarness) async throws {
        harness.matrix.state.withLock { $0.members[room] = [alice: "Alice"] }
        try await harness.store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc))
        harness.xmpp.feed.yield(.connected(reconnected: false))
        try await eventually("link active") { try await harness.store.roomLinks().first?.status == .active }
    }

    @Test func anXMPPMessageCountsOnceDespiteADuplicateCopyAndRetries() async throws {
        let harness = try BridgeHarness()
        try await linked(harness)
        harness.matrix.state.withLock { $0.unavailableSends = 2 }
        let first = harness.xmpp.occupantSays("romeo", "first", in: muc)
        harness.xmpp.feed.yield(.message(first))   // a duplicate copy
        _ = harness.xmpp.occupantSays("romeo", "/me bows", in: muc)
        try await eventually("both bridged", timeout: 15) { harness.matrix.state.withLock { $0.sent.count } == 2 }
        try await eventually("both counted") {
            try scrape(harness)["isthmus_messages_total{direction=\"xmpp_to_matrix\",kind=\"emote\"}"] == 1
        }
        let metrics = try scrape(harness)
        #expect(metrics["isthmus_messages_total{direction=\"xmpp_to_matrix\",kind=\"text\"}"] == 1)
        #expect(metrics["isthmus_bridge_latency_seconds_count{direction=\"xmpp_to_matrix\"}"] == 2)
        #expect(metrics["isthmus_xmpp_connected"] == 1)
        await harness.stop()
    }

    @Test func aMatrixMessageCountsOnceDespiteAReplayedTransaction() async throws {
        let harness = try BridgeHarness()
        try await linked(harness)
        let event = MatrixRoomEvent(eventID: EventID("$m1")!, room: room, sender: alice, content: .message(msgtype: .emote, body: "waves"))
        try await harness.bridge.acceptMatrixEvents([event])
        try await harness.bridge.acceptMatrixEvents([event])   // a replayed transaction
        let notice = MatrixRoomEvent(eventID: EventID("$m2")!, room: room, sender: alice, content: .message(msgtype: .notice, body: "n"))
        try await harness.bridge.acceptMatrixEvents([notice])
        try await eventually("both receipted") {
            try await harness.store.mapping(room: room, eventID: EventID("$m2")!)?.state == .delivered
        }
        let metrics = try scrape(harness)
        #expect(metrics["isthmus_messages_total{direction=\"matrix_to_xmpp\",kind=\"emote\"}"] == 1)
        #expect(metrics["isthmus_messages_total{direction=\"matrix_to_xmpp\",kind=\"notice\"}"] == 1)
        #expect(metrics["isthmus_messages_total{direction=\"matrix_to_xmpp\",kind=\"text\"}"] == 0)
        #expect(metrics["isthmus_bridge_latency_seconds_count{direction=\"matrix_to_xmpp\"}"] == 2)
        await harness.stop()
    }

    @Test func readinessNeedsTheComponentAndARecentHomeserverAnswer() {
        let health = BridgeHealth(homeserverWindow: .seconds(60))
        let start = ContinuousClock.now
        #expect(health.verdict(now: start).reasons == ["the XMPP component is not connected", "the homeserver has not answered yet"])
        health.xmppConnected(true)
        health.homeserverAnswered(at: start)
        #expect(health.verdict(now: start + .seconds(60)).ready)
        #expect(health.verdict(now: start + .seconds(61)).reasons == ["the homeserver has not answered for 61 s"])
        health.xmppConnected(false)
        #expect(health.verdict(now: start + .seconds(1)).reasons == ["the XMPP component is not connected"])
        health.setClientMode(account: "relay@example.org")
        #expect(health.verdict(now: start + .seconds(1)).reasons == ["the XMPP account relay@example.org is not connected"])
        health.xmppConnected(true)
        #expect(health.verdict(now: start + .seconds(1)).ready, "logged in")
        // Matrix client mode: a stalled session says what the operator must do, until it works again.
        AccountClient.observe(.stalled(.softLoggedOut), BridgeMetrics(health: health))
        #expect(health.verdict(now: start + .seconds(1)).reasons == ["the bridge's Matrix account cannot act: \(SessionStall.softLoggedOut)"])
        AccountClient.observe(.recovered, BridgeMetrics(health: health))
        #expect(health.verdict(now: start + .seconds(1)).ready)
    }

    /// The session's events as counts: a login after a soft logout counts as both, as does a stall for want of a way
    /// to log in again.
    @Test func sessionEventsAreCountedWithSoftLogoutsApart() throws {
        let metrics = BridgeMetrics()
        AccountClient.observe(.refreshed, metrics)
        AccountClient.observe(.loggedIn(.noSession), metrics)
        AccountClient.observe(.loggedIn(.softLogout), metrics)
        AccountClient.observe(.stalled(.softLoggedOut), metrics)
        AccountClient.observe(.stalled(.loggedOut), metrics)
        let scrape = try MetricsScrape(metrics.exposition())
        #expect(scrape[#"isthmus_matrix_session_events_total{event="refreshed"}"#] == 1)
        #expect(scrape[#"isthmus_matrix_session_events_total{event="logged_in"}"#] == 2)
        #expect(scrape[#"isthmus_matrix_session_events_total{event="soft_logout"}"#] == 2)
        #expect(scrape[#"isthmus_matrix_session_events_total{event="stalled"}"#] == 2)
    }

    @Test func theStoresWorkIsScrapedAsItsCounters() async throws {
        let metrics = BridgeMetrics()
        let store = try Store(path: ":memory:", logger: .disabled)
        metrics.observe(store: store.activity)
        let before = try MetricsScrape(metrics.exposition())
        try await store.markTransactionProcessed(TransactionID("t1")!)
        let after = try MetricsScrape(metrics.exposition())
        #expect(after["isthmus_store_commits_total"] - before["isthmus_store_commits_total"] == 1)
        #expect(after["isthmus_store_calls_total"] - before["isthmus_store_calls_total"] == 1)
        #expect(after["isthmus_store_statements_total"] - before["isthmus_store_statements_total"] >= 1)
        #expect(after.text.contains("# TYPE isthmus_store_thread_wakeups_total counter"))
    }
}
