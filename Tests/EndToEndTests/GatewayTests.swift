import Foundation
import IsthmusCommon
import IsthmusStore
import TestSupport
import XCTest
import XMPP

/// Gateway mode from Matrix against real servers: a Matrix user walks into a MUC by joining its gateway alias
/// (`gateway.matrix_aliases`), in any case; what the gateway refuses leaves nothing behind; third-party lookups find
/// the alias; an idle room is closed and opens again on demand.
final class GatewayTests: XCTestCase {
    /// `#_xmpp_<room>_<muc-domain>:localhost`, the room's localpart as given (any case).
    func gatewayAlias(_ room: String, domain: String) -> String { "#_xmpp_\(room)_\(domain):localhost" }

    func startGatewayBridge(_ world: EndToEndHarness, extra: String = "") async throws {
        try world.editConfig { $0 + "\ngateway:\n  matrix_aliases: true\n" + extra }
        try await world.startBridge()
    }

    func testAMatrixUserOpensAMUCByItsAliasAndTalksBothWays() async throws {
        let world = try EndToEndHarness("gateway-open")
        try await startGatewayBridge(world)
        defer { world.stopBridge() }
        let muc = world.muc("lounge")
        let bob = try await world.xmppUser("bob")
        defer { bob.close() }
        try await bob.createRoom(muc, nick: "Bob", fields: ["muc#roomconfig_roomname": ["Bob's lounge"]])

        // Upper case, as a person might type it: the MUC is the same (XMPP folds case).
        let alice = try await world.matrixUser("alice")
        let shouted = gatewayAlias(muc.localpart!.uppercased(), domain: world.bed.mucDomain)
        let room = try await alice.join(alias: shouted)
        let links = try world.links()
        XCTAssertEqual(links.count, 1, "\(links)")
        XCTAssertEqual(links.first?["matrix_room"], room)
        XCTAssertEqual(links.first?["muc"], muc.description)
        XCTAssertEqual(links.first?["kind"], "dynamic")
        XCTAssertEqual(links.first?["status"], "active", "the alias answers once the bridge is in the MUC")
        let name = try await alice.state("m.room.name", in: room)?["name"] as? String
        XCTAssertEqual(name, "Bob's lounge")
        let joinRule = try await alice.state("m.room.join_rules", in: room)?["join_rule"] as? String
        XCTAssertEqual(joinRule, "public")

        // Both ways.
        try await alice.send("hello from matrix", to: room)
        let heard = try await world.xmppMessages(bob, from: muc, untilBody: "hello from matrix", excludingNick: "Bob")
        XCTAssertEqual(heard.map(\.body), ["hello from matrix"])
        _ = try bob.sendGroupchat(to: muc, body: "hello from xmpp")
        let seen = try await world.matrixMessages(alice, in: room, untilBody: "hello from xmpp", excluding: alice.userID)
        XCTAssertEqual(seen.map(\.body), ["hello from xmpp"])

        // Another spelling of the same MUC, by another user: the same room, no second portal.
        let carol = try await world.matrixUser("carol")
        let lower = gatewayAlias(muc.localpart!, domain: world.bed.mucDomain)
        let carolsRoom = try await carol.join(alias: lower)
        XCTAssertEqual(carolsRoom, room)
        XCTAssertEqual(try world.links().count, 1)

        // The homeserver's third-party lookups find the alias from the MUC's address.
        let protocols = try await alice.thirdPartyProtocols()
        XCTAssertTrue(protocols.contains("xmpp"), "\(protocols)")
        let found = try await alice.thirdPartyAliases(protocol: "xmpp", ["muc": muc.description])
        XCTAssertEqual(found, [lower.lowercased()])
    }

    func testWhatTheGatewayRefusesLeavesNoRoomBehind() async throws {
        let world = try EndToEndHarness("gateway-refusals")
        try await startGatewayBridge(world, extra: "  allowed_muc_domains: [\(world.bed.mucDomain)]\n")
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let bob = try await world.xmppUser("bob")
        defer { bob.close() }
        let closed = world.muc("members")
        try await bob.createRoom(closed, nick: "Bob", fields: ["muc#roomconfig_membersonly": ["1"]])
        let refused = [
            gatewayAlias("nosuch-\(world.suffix)", domain: world.bed.mucDomain),        // no such MUC
            gatewayAlias("lounge-\(world.suffix)", domain: "conference.elsewhere.example"), // not an allowed service
            gatewayAlias(closed.localpart!, domain: world.bed.mucDomain),                // members-only
        ]
        for alias in refused {
            do {
                let room = try await alice.join(alias: alias)
                XCTFail("\(alias) opened \(room)")
            } catch let failure as MatrixTestUser.Failure {
                XCTAssertEqual(failure.status, 404, "\(alias): \(failure)")
            }
            let resolved = try await alice.resolve(alias: alias)
            XCTAssertNil(resolved, "\(alias) names no room")
        }
        XCTAssertEqual(try world.links().count, 0)
        // The refusals are counted by reason.
        let metrics = try await MetricsScrape.fetch(port: world.bed.metricsPort)
        for reason in ["no_such_room", "domain_not_allowed", "closed_room"] {
            XCTAssertGreaterThanOrEqual(metrics["isthmus_gateway_alias_queries_total{outcome=\"\(reason)\"}"], 1, reason)
        }
        XCTAssertEqual(metrics["isthmus_gateway_alias_queries_total{outcome=\"opened\"}"], 0)
    }

    func testARoomWithoutMatrixMembersIsClosedAndOpensAgainOnDemand() async throws {
        let world = try EndToEndHarness("gateway-idle")
        try await startGatewayBridge(world, extra: "  idle_days: 1\n")
        let muc = world.muc("quiet")
        let bob = try await world.xmppUser("bob")
        defer { bob.close() }
        try await bob.createRoom(muc, nick: "Bob", fields: [:])
        let alice = try await world.matrixUser("alice")
        let alias = gatewayAlias(muc.localpart!, domain: world.bed.mucDomain)
        let first = try await alice.join(alias: alias)
        try await alice.leave(first)
        world.stopBridge()

        // Two days without a Matrix member, as the store would say after them; the sweep at start closes it.
        let store = try Store(location: world.storeLocation, logger: .disabled)
        try await store.setRoomLinkIdle(RoomID(first)!, since: Date().addingTimeInterval(-2 * 86_400))
        try await world.startBridge()
        defer { world.stopBridge() }
        try await eventually("the idle room unlinked", timeout: 30) { try world.links().isEmpty }
        // Nobody walks into the closed room: its alias is gone, its join rule is invite, nobody of ours is in it.
        do {
            try await alice.join(first)
            XCTFail("the closed room cannot be joined")
        } catch let failure as MatrixTestUser.Failure {
            XCTAssertTrue([403, 404].contains(failure.status), "\(failure)")
        }

        // Joining the alias again (resolving it is a query too) opens the MUC in a new room.
        let second = try await alice.join(alias: alias)
        XCTAssertNotEqual(second, first)
        XCTAssertEqual(try world.links().map { $0["matrix_room"] }, [second])
    }
}
