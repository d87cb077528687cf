import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP
import XMPPComponent

/// Upgrading from a version whose occupant was the component's domain JID (`<component>/isthmus`): the rooms it
/// created have the domain as owner, and on ejabberd — which looks an occupant's affiliation up by bare JID and then
/// by domain — every Matrix user's occupant would inherit that ownership.
final class OwnershipUpgradeTests: XCTestCase {
    /// A MUC the old bridge created: its occupant was the component's domain JID, so the domain is the MUC's owner
    /// (replayed here over a component connection of the test's own, before the bridge starts; it also makes the XMPP
    /// user bob an owner, to read the affiliation lists). Once the link is up, the bridge's occupant owns the MUC
    /// under its own JID, the domain holds no affiliation, and a Matrix user's occupant joins with none.
    func testTheComponentDomainsOwnershipIsHandedToTheBridgesOccupant() async throws {
        let world = try EndToEndHarness("upgrade")
        let muc = world.muc("upgrade")
        let domain = try XCTUnwrap(JID(world.bed.componentDomain))
        let bot = try XCTUnwrap(JID("isthmus@\(world.bed.componentDomain)"))
        let bob = try XCTUnwrap(JID("bob@\(world.bed.xmppDomain)"))
        try await createRoomAsTheOldBridge(world.bed, muc, owners: [bob])

        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        func listed(_ affiliation: String) async throws -> [JID] {
            try await romeo.mucAdminList("affiliation", affiliation, in: muc).compactMap { $0.jid?.bare }
        }
        let before = try await listed("owner")
        XCTAssertTrue(before.contains(domain), "the domain owns the MUC before the upgrade: \(before)")
        XCTAssertFalse(before.contains(bot), "and the bridge's occupant does not: \(before)")

        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let room = try await alice.createRoom(aliasLocalpart: "room-\(world.suffix)-upgrade", invite: [world.botUserID])
        let linked = try world.cli("link", room, muc.description)
        XCTAssertEqual(linked.status, 0, linked.stderr)
        try await world.waitForLink(room, status: "active")
        try await eventually("the bridge's occupant owns the MUC and the domain holds nothing", timeout: 20, pollEvery: .milliseconds(250)) {
            let owners = try await listed("owner")
            var everyone = owners
            for affiliation in ["admin", "member", "outcast"] { everyone += try await listed(affiliation) }
            return owners.contains(bot) && !everyone.contains(domain)
        }
        XCTAssertTrue(world.bridge?.log.contains("notice bridge.portal: Took the MUC's ownership over from the component's domain JID") ?? false,
                      "the handover is logged at notice")

        let matrixBob = try await world.matrixUser("bob")
        try await alice.invite(matrixBob.userID, to: room)
        try await matrixBob.join(room)
        let joined = try await romeo.nextPresence(within: 20, "bob's occupant") { $0.from?.resource == "bob" && $0.type == .available }
        XCTAssertEqual(joined.mucUser?.item?.affiliation, MUCAffiliation.none, "a Matrix user's occupant owns nothing")
        XCTAssertEqual(joined.mucUser?.item?.role, .participant)
        romeo.close()
    }

    /// What the old bridge did when it linked a MUC that did not exist: its occupant `<component>/isthmus` joined and
    /// created it (configured like the bridge does), so the component's domain is its owner. Then `owners` are made
    /// owners too, and the occupant leaves. The component connection is closed before the bridge starts (Prosody
    /// refuses a second connection for the same component).
    func createRoomAsTheOldBridge(_ bed: TestBed, _ muc: JID, owners: [JID]) async throws {
        let connection = ComponentConnection(
            configuration: ComponentConfiguration(host: bed.host, port: bed.componentPort, componentDomain: bed.componentDomain,
                                                  secret: bed.componentSecret, serverDomain: bed.xmppDomain, pingInterval: .seconds(3600)),
            logger: .disabled)
        let events = AsyncQueue.collecting(connection.events)
        let runner = BackgroundTask { await connection.run() }
        do {
            _ = try await events.next(within: 10, "the old bridge's component connected") { $0 == .connected(reconnected: false) }
            let occupant = try XCTUnwrap(JID("\(bed.componentDomain)/isthmus"))
            let joined = try await connection.join(room: muc, nick: "Matrix", occupant: occupant)
            guard case .joined(let presence) = joined, presence.createdRoom else {
                throw OldBridgeFailure(description: "the old bridge's join did not create \(muc): \(joined)")
            }
            for owner in owners {
                let query = XElement("query", namespace: XMPPNamespace.mucAdmin, children: [
                    .element(MUCItem(affiliation: .owner, jid: owner).element(namespace: XMPPNamespace.mucAdmin)),
                ])
                let answer = try await connection.sendIQ(IQ(type: .set, from: occupant, to: muc.bare, payload: .other(query)))
                XCTAssertNil(answer.error, "the old bridge makes \(owner) an owner")
            }
            _ = try await connection.leave(room: muc, nick: "Matrix", occupant: occupant, timeout: .seconds(5))
        } catch {
            await connection.close()
            await runner.stop()
            throw error
        }
        await connection.close()
        await runner.finished()
    }

    struct OldBridgeFailure: Error, CustomStringConvertible {
        var description: String
    }
}
