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

    func testTheProvisioningAPILinksListsAndUnlinksAndRefusesAWrongToken() async throws {
        let world = try EndToEndHarness("provisioning-api")
        let secret = "provisioning-secret-\(world.suffix)"
        try world.editConfig { $0 + "\nprovisioning:\n  shared_secret: \(secret)\n" }
        try await world.startBridge()
        defer { world.stopBridge() }
        let api = ProvisioningClient(port: world.bed.appServicePort, token: secret)
        let stranger = ProvisioningClient(port: world.bed.appServicePort, token: "wrong-token-wrong-token")
        let alice = try await world.matrixUser("alice")
        let room = try await alice.createRoom(aliasLocalpart: "api-\(world.suffix)", invite: [world.botUserID])
        let muc = world.muc("api")

        var answer = try await stranger.call("POST", "links", body: ["matrix_room": room, "muc": muc.description])
        XCTAssertEqual(answer.status, 403)
        XCTAssertEqual(answer.json["errcode"] as? String, "M_FORBIDDEN")
        XCTAssertEqual(try world.links().count, 0)

        answer = try await api.call("POST", "links", body: ["matrix_room": "#api-\(world.suffix):localhost", "muc": muc.description])
        XCTAssertEqual(answer.status, 201, "\(answer.json)")
        XCTAssertEqual(answer.json["matrix_room"] as? String, room)
        try await world.waitForLink(room, status: "active")
        answer = try await api.call("GET", "links")
        let listed = try XCTUnwrap(answer.json["links"] as? [[String: Any]])
        XCTAssertEqual(listed.map { $0["muc"] as? String }, [muc.description])
        XCTAssertEqual(listed.first?["status"] as? String, "active")
        XCTAssertEqual(listed.first?["sync_name"] as? Bool, false, "sync_name defaults to false")

        // The same checks as the CLI: a second link of the MUC is refused.
        let other = try await alice.createRoom(invite: [world.botUserID])
        answer = try await api.call("POST", "links", body: ["matrix_room": other, "muc": muc.description])
        XCTAssertEqual(answer.status, 409)
        XCTAssertTrue((answer.json["error"] as? String)?.contains("already linked") == true, "\(answer.json)")

        // A stranger gets the same refusal for a linked and an unlinked room.
        let forLinked = try await stranger.call("DELETE", "links/\(room)")
        let forOther = try await stranger.call("DELETE", "links/\(other)")
        XCTAssertEqual(forLinked.status, 403)
        XCTAssertEqual(forOther.status, 403)
        XCTAssertEqual(forLinked.json["errcode"] as? String, forOther.json["errcode"] as? String)
        XCTAssertEqual(forLinked.json["error"] as? String, forOther.json["error"] as? String)

        answer = try await api.call("DELETE", "links/\(room)")
        XCTAssertEqual(answer.status, 200, "\(answer.json)")
        try await eventually("link gone") { try world.links().isEmpty }
        try await eventually("bot left the Matrix room") { try await alice.members(of: room)[world.botUserID] == nil }
        answer = try await api.call("DELETE", "links/\(room)")
        XCTAssertEqual(answer.status, 404)
        XCTAssertEqual(answer.json["errcode"] as? String, "M_NOT_FOUND")

        // `sync_name` asks for the MUC's name to be copied (as `link --sync-name` does).
        answer = try await api.call("POST", "links", body: ["matrix_room": other, "muc": world.muc("api-named").description, "sync_name": true])
        XCTAssertEqual(answer.status, 201, "\(answer.json)")
        XCTAssertEqual(answer.json["sync_name"] as? Bool, true)
    }
}

/// A caller of the provisioning API on the bridge's appservice listener.
struct ProvisioningClient {
    var port: Int
    var token: String?

    struct Answer {
        var status: Int
        var body: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]) ?? [:] }
    }

    func call(_ method: String, _ path: String, body: [String: Any]? = nil) async throws -> Answer {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~/")
        let encoded = path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        let response = try await RawHTTP.request(method, port: port, "/_isthmus/provision/v1/\(encoded)", bearer: token, body: data,
                                                 timeout: 30)
        return Answer(status: response.status, body: response.text)
    }
}
