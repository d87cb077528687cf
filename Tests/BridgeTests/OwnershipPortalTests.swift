import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing
import TestSupport

/// The ownership handover through a whole bridge over the scripted fakes: the requests the portal makes, from whom.
@Suite struct OwnershipPortalTests {
    let room = RoomID("!room:localhost")!
    let muc = JID("lounge@conference.localhost")!
    let naming = BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!

    func activate(_ harness: BridgeHarness) async throws {
        try await harness.store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc))
        harness.xmpp.feed.yield(.connected(reconnected: false))
        try await eventually("link active") { try await harness.store.roomLinks().first?.status == .active }
    }

    func affiliations(_ harness: BridgeHarness) -> [String] {
        harness.xmpp.state.withLock { $0.affiliations.map { "\($0.jid) \($0.affiliation.rawValue) by \($0.actor)" } }
    }

    @Test func theDomainGrantsTheBotOwnershipThenTheBotTakesTheDomainsAffiliationAway() async throws {
        let harness = try BridgeHarness()
        harness.xmpp.state.withLock { $0.botAffiliation = MUCAffiliation.none }
        try await activate(harness)
        #expect(affiliations(harness) == ["isthmus@bridge.localhost owner by bridge.localhost",
                                          "bridge.localhost none by isthmus@bridge.localhost/isthmus"])
        await harness.stop()
    }

    /// ejabberd: the bot is owner only through the domain's ownership (it is not on the owner list).
    @Test func anOwnerBotThroughTheDomainGetsAnEntryOfItsOwnFirst() async throws {
        let harness = try BridgeHarness()
        harness.xmpp.state.withLock {
            $0.botAffiliation = .owner
            $0.affiliationLists = [.owner: [naming.componentJID]]
        }
        try await activate(harness)
        #expect(affiliations(harness) == ["isthmus@bridge.localhost admin by isthmus@bridge.localhost/isthmus",
                                          "isthmus@bridge.localhost owner by bridge.localhost",
                                          "bridge.localhost none by isthmus@bridge.localhost/isthmus"])
        await harness.stop()
    }

    @Test func anOwnerBotInARoomWithoutTheDomainChangesNothing() async throws {
        let harness = try BridgeHarness()
        harness.xmpp.state.withLock {
            $0.botAffiliation = .owner
            $0.affiliationLists = [.owner: [naming.botOccupant.bare], .admin: [JID("romeo@localhost")!]]
        }
        try await activate(harness)
        #expect(affiliations(harness) == [])
        await harness.stop()
    }

    @Test func aRefusedGrantChangesNothingAndTheLinkComesUp() async throws {
        let harness = try BridgeHarness()
        harness.xmpp.state.withLock {
            $0.botAffiliation = .member
            $0.refusedAffiliationActors = [naming.componentJID]
        }
        try await activate(harness)
        #expect(affiliations(harness) == [])
        #expect(harness.xmpp.state.withLock { $0.joins.map(\.occupant) } == [naming.botOccupant])
        await harness.stop()
    }
}
