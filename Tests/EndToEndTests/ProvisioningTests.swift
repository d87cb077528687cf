import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// Provisioning against real servers: the room's `m.bridge` state (MSC2346) follows the link.
final class ProvisioningTests: XCTestCase {
    func testBridgeStateAppearsOnLinkAndIsWithdrawnOnUnlink() async throws {
        let world = try EndToEndHarness("m-bridge")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("mbridge")
        let stateKey = "xmpp://\(muc)"
        let room = try await alice.createRoom(invite: [world.botUserID])
        try await alice.grantPower(50, to: world.botUserID, in: room)
        let before = try await alice.state("m.bridge", stateKey: stateKey, in: room)
        XCTAssertNil(before)
        let linked = try world.cli("link", room, muc.description)
        XCTAssertEqual(linked.status, 0, linked.stderr)
        try await world.waitForLink(room, status: "active")

        for type in ["m.bridge", "uk.half-shot.bridge"] {
            let state = try await alice.state(type, stateKey: stateKey, in: room)
            let content = try XCTUnwrap(state, type)
            XCTAssertEqual(content["bridgebot"] as? String, world.botUserID, type)
            XCTAssertEqual((content["protocol"] as? [String: Any])?["id"] as? String, "xmpp", type)
            XCTAssertEqual((content["channel"] as? [String: Any])?["id"] as? String, muc.description, type)
        }

        XCTAssertEqual(try world.cli("unlink", muc.description).status, 0)
        try await eventually("link gone") { try world.links().isEmpty }
        for type in ["m.bridge", "uk.half-shot.bridge"] {
            let content = try await alice.state(type, stateKey: stateKey, in: room)
            XCTAssertEqual(content?.isEmpty, true, "\(type) withdrawn: \(String(describing: content))")
        }
    }

    func testALinkWithoutPowerForStateStillBecomesActiveAndSaysWhy() async throws {
        let world = try EndToEndHarness("m-bridge-no-power")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("nopower")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        let state = try await alice.state("m.bridge", stateKey: "xmpp://\(muc)", in: room)
        XCTAssertNil(state)
        let log = try XCTUnwrap(world.bridge?.log)
        XCTAssertEqual(log.components(separatedBy: "Could not set the room's m.bridge state").count - 1, 1, log.suffix(3000).description)
    }
}
