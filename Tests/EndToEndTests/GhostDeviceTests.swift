import Foundation
import IsthmusCommon
import MatrixCrypto
import TestSupport
import XCTest
import XMPP

/// With `encryption.allow`, a ghost invited into an encrypted DM gets a device of its own on the real homeserver,
/// signed by the ghost's own cross-signing identity, before it joins; a message it cannot decrypt is told, never
/// dropped in silence; a restart keeps the same device.
final class GhostDeviceTests: XCTestCase {
    static let pickleKey = "an end-to-end test's pickle key, long enough"

    func testAGhostInAnEncryptedDMGetsItsOwnCrossSignedDeviceOnceAcrossARestart() async throws {
        let world = try EndToEndHarness("ghost-device")
        try world.editConfig { $0 + "\nencryption:\n  allow: true\n  pickle_key: \"\(Self.pickleKey)\"\n" }
        try await world.startBridge()
        let scene = try await PrivateMessageTests.Scene(world, muc: "ghostdev", account: "bob", nick: "Romeo")
        let (alice, romeo, ghost) = (scene.alice, scene.occupant, scene.ghost)

        let dm = try await alice.createEncryptedDirectRoom(inviting: ghost)
        try await eventually("the ghost joined alice's encrypted DM", timeout: 30) { try await alice.members(of: dm)[ghost] != nil }
        let device = try Self.verifiedDevice(of: ghost, in: try await alice.queryKeys(of: [ghost]))

        // Its one-time keys are published and signed by the device.
        let claimed = try CanonicalJSON(parsing: Array(try await alice.claimOneTimeKey(of: ghost, device: device.id)))
        guard case .object(let keys)? = claimed["one_time_keys"]?[ghost]?[device.id], let keyID = keys.keys.first, let key = keys[keyID] else {
            return XCTFail("no one-time key could be claimed: \(claimed.canonicalString)")
        }
        XCTAssertTrue(keyID.hasPrefix("signed_curve25519:"), keyID)
        XCTAssertNoThrow(try key.verifySignature(by: ghost, keyID: "ed25519:\(device.id)", publicKey: device.ed25519))

        // A message whose key never reached the bridge (this one was made up) is not bridged: the DM is told, by a notice
        // that the ghost's device encrypts (EncryptedDirectChatTests reads it with an end-to-end client).
        try await alice.sendEvent("m.room.encrypted", content: Self.ciphertext, to: dm)
        let notice = try await eventuallyValue("the ghost's encrypted notice in the DM", timeout: 30) {
            try await alice.timeline(of: dm).first { $0.sender == ghost && $0.type == "m.room.encrypted" }
        }
        XCTAssertEqual(notice.raw.at("content", "device_id")?.stringValue, device.id, "encrypted by the ghost's own device")

        // After a restart, another encrypted event finds the device ready: still one device, the same.
        world.stopBridge()
        try await world.startBridge()
        defer { world.stopBridge() }
        try await alice.sendEvent("m.room.encrypted", content: Self.ciphertext, to: dm)
        try await alice.send("sentinel after the restart", to: dm)
        let sentinel = try await romeo.nextMessage(within: 30, "alice's sentinel") { $0.type == .chat && $0.body != nil }
        XCTAssertEqual(sentinel.body, "sentinel after the restart")
        let again = try Self.verifiedDevice(of: ghost, in: try await alice.queryKeys(of: [ghost]))
        XCTAssertEqual(again.id, device.id)
        XCTAssertEqual(again.ed25519, device.ed25519)

        // The stopped doctor below needs nothing queued for the bridge: the homeserver sends its transactions in order,
        // and doctor refuses any but its probe. So everything the bridge caused on Matrix (the second notice, whose
        // echo comes back to it) must be behind a barrier it has taken: a message in the linked room that reaches the
        // MUC, and whose own bridging adds nothing on Matrix. Romeo stays until the end, so his leaving adds nothing.
        try await eventually("the ghost's second notice in the DM", timeout: 30) {
            try await alice.timeline(of: dm).filter { $0.sender == ghost && $0.type == "m.room.encrypted" }.count == 2
        }
        try await alice.send("barrier before doctor", to: scene.room)
        let barrier = try await romeo.nextMessage(within: 30, "alice's barrier in the MUC") { $0.type == .groupchat && $0.body != nil }
        XCTAssertEqual(barrier.body, "barrier before doctor")

        // doctor sees the kept device and that the pickle key opens it (its component check fails beside a running
        // serve: the domain is taken).
        let doctor = try world.cli("doctor")
        XCTAssertTrue(doctor.stdout.contains("ok   encryption: 1 ghost device(s) kept; encryption.pickle_key opens them"), doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("warn encryption.to_device: not checked: serve is running"), doctor.stdout)

        // With serve stopped, doctor's own listener sees its to-device probe to the ghost's device come back.
        world.stopBridge()
        let stopped = try world.cli("doctor")
        XCTAssertTrue(stopped.stdout.contains("ok   encryption.to_device: the homeserver pushes to-device messages to the bridge"), stopped.stdout)
        XCTAssertFalse(stopped.stdout.contains("encryption.homeserver"), "no reminder once the probe checked it: \(stopped.stdout)")
        romeo.close()
    }

    static var ciphertext: [String: Any] { [
        "algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgAEnACgAkLmt6qF84IK++J7UDH2Za1YVchHyprqTqsg2yyOwAtHaZTwyNg37afzg8f3r9IsN9rH4RNFg",
        "device_id": "ALICEDEVICE", "sender_key": "c8qCmkNpDmT9W3pIw9lmLBmdTtqYpoGkrLMBUTfxgSY",
        "session_id": "2PO8ZDnQpbMZaWxhGzGZNPaGDqCGw6gG1AvZczWYd9w",
    ] }

    /// The one device `/keys/query` lists for `user`, after checking what a strict client checks: the device's keys
    /// signed by the device; the self-signing key signed by the master key; the device signed by the self-signing key.
    static func verifiedDevice(of user: String, in answer: Data) throws -> (id: String, ed25519: Ed25519PublicKey) {
        let keys = try CanonicalJSON(parsing: Array(answer))
        guard case .object(let devices)? = keys["device_keys"]?[user], devices.count == 1,
              let id = devices.keys.first, let device = devices[id] else {
            throw Unexpected("not exactly one device for \(user): \(keys.canonicalString)")
        }
        XCTAssertEqual(device["user_id"], .string(user))
        XCTAssertEqual(device["device_id"], .string(id))
        guard case .string(let ed25519Text)? = device["keys"]?["ed25519:\(id)"], case .string? = device["keys"]?["curve25519:\(id)"] else {
            throw Unexpected("the device has no Ed25519 or Curve25519 key: \(device.canonicalString)")
        }
        let ed25519 = try Ed25519PublicKey(base64: ed25519Text)
        try device.verifySignature(by: user, keyID: "ed25519:\(id)", publicKey: ed25519)

        let master = try onlyKey(keys["master_keys"]?[user], usage: "master")
        let selfSigning = try onlyKey(keys["self_signing_keys"]?[user], usage: "self_signing")
        try selfSigning.object.verifySignature(by: user, keyID: master.id, publicKey: master.key)
        try device.verifySignature(by: user, keyID: selfSigning.id, publicKey: selfSigning.key)
        return (id, ed25519)
    }

    /// A cross-signing key object's one key, after checking its usage.
    static func onlyKey(_ object: CanonicalJSON?, usage: String) throws -> (object: CanonicalJSON, id: String, key: Ed25519PublicKey) {
        guard let object, object["usage"] == .array([.string(usage)]), case .object(let keys)? = object["keys"], keys.count == 1,
              let id = keys.keys.first, case .string(let text)? = keys[id] else {
            throw Unexpected("no \(usage) key: \(object?.canonicalString ?? "none")")
        }
        return (object, id, try Ed25519PublicKey(base64: text))
    }

    struct Unexpected: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
