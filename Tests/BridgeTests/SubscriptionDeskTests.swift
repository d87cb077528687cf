@testable import Bridge
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import TestSupport
import Testing

/// Client mode's answer to presence subscription requests (`xmpp.client.accept_subscriptions`), on both backends, and
/// through the running bridge: every request gets one, a refusal too.
@Suite struct SubscriptionDeskTests {
    let room = RoomID("!room:localhost")!
    let juliet = JID("juliet@capulet.example")!

    /// A store where juliet is a linked room's occupant, known by her full real JID; romeo by her occupant-id alone.
    func storeKnowingJuliet(_ backend: StoreBackend) async throws -> StoreFixture {
        let fixture = try await backend.open(persistent: false)
        try await fixture.store.saveRoomGhost(RoomGhost(room: room, user: UserID("@_xmpp_juliet:localhost")!, nick: "Juliet",
                                                        occupantID: nil, realJID: juliet.with(resource: "balcony"), joined: true))
        try await fixture.store.saveRoomGhost(RoomGhost(room: room, user: UserID("@_xmpp_romeo:localhost")!, nick: "Romeo",
                                                        occupantID: OccupantID("oid-romeo"), realJID: nil, joined: true))
        return fixture
    }

    @Test(arguments: StoreBackend.all) func eachPolicyAcceptsWhomItSays(_ backend: StoreBackend) async throws {
        let fixture = try await storeKnowingJuliet(backend)
        defer { withExtendedLifetime(fixture) {} }
        let store = fixture.store
        let stranger = JID("romeo@montague.example")!
        let lookalike = JID("juliet@capulet.example.evil")!
        #expect(try await SubscriptionDesk(policy: .none).accepts(juliet, store: store) == false)
        #expect(try await SubscriptionDesk(policy: .all).accepts(stranger, store: store) == true)
        let linked = SubscriptionDesk(policy: .linked)
        #expect(try await linked.accepts(juliet, store: store) == true, "her full real JID is hers")
        #expect(try await linked.accepts(stranger, store: store) == false)
        #expect(try await linked.accepts(lookalike, store: store) == false, "a prefix is no match")
    }

    @Test func theBridgeAnswersEveryRequestAndRoomsNeverSeeOne() async throws {
        let harness = try BridgeHarness(subscriptions: .linked)
        try await harness.store.saveRoomGhost(RoomGhost(room: room, user: UserID("@_xmpp_juliet:localhost")!, nick: "Juliet",
                                                        occupantID: nil, realJID: juliet, joined: true))
        harness.xmpp.feed.yield(.subscriptionRequest(from: juliet))
        harness.xmpp.feed.yield(.subscriptionRequest(from: JID("spam@example.net")!))
        try await eventually("both answered") { harness.xmpp.state.withLock { $0.subscriptionAnswers.count } == 2 }
        let answers = harness.xmpp.state.withLock { $0.subscriptionAnswers.map { "\($0.requester) \($0.accepted)" } }
        #expect(answers == ["juliet@capulet.example true", "spam@example.net false"])
        await harness.stop()
    }
}
