@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixCrypto
import TestSupport
import Testing

/// A ghost's message in an encrypted room, received by a Matrix user's device played by vodozemac (the library Element
/// uses): the room key goes over Olm to each device whose keys its owner signed, `m.room_key.withheld` to a device
/// without a one-time key, nothing to a device whose signature fails; the user's device decrypts the message.
@Suite struct GhostDevicesSendingTests {
    let ghost = UserID("@_xmpp_romeo:localhost")!
    let alice = UserID("@alice:localhost")!
    let room = RoomID("!room:localhost")!

    /// A device of alice's played by the oracle account `name`: its signed device keys and, when `oneTimeKey`, a
    /// claimed signed one-time key.
    func device(_ oracle: VodozemacOracle, _ name: String, id: String, oneTimeKey: Bool, signed: Bool = true) throws
        -> (keys: JSONValue, claimed: JSONValue?, curve: String) {
        let account = try oracle.call("account.new", ["name": name])
        let curve = account["curve25519"] as! String, ed = account["ed25519"] as! String
        func sign(_ object: CanonicalJSON, by key: String) throws -> CanonicalJSON {
            let signature = try oracle.string("account.sign", ["name": name, "message": UnpaddedBase64.encode(try object.signingBytes())],
                                              "signature")
            guard case .object(var members) = object else { return object }
            members["signatures"] = .object([alice.rawValue: .object([key: .string(signature)])])
            return .object(members)
        }
        var keys = try sign(.object([
            "user_id": .string(alice.rawValue), "device_id": .string(id), "algorithms": .array(OlmAccount.algorithms.map(CanonicalJSON.string)),
            "keys": .object(["curve25519:\(id)": .string(curve), "ed25519:\(id)": .string(ed)]),
        ]), by: "ed25519:\(id)")
        if !signed, case .object(var members) = keys {
            members["device_id"] = .string(id)
            members["keys"] = .object(["curve25519:\(id)": .string(curve), "ed25519:\(id)": .string(ed), "extra:\(id)": .string("x")])
            keys = .object(members)   // the signature no longer covers what is listed
        }
        var claimed: JSONValue?
        if oneTimeKey {
            let otks = try #require(try oracle.call("account.one_time_keys", ["name": name, "count": 1])["keys"] as? [String: String])
            let (keyID, key) = try #require(otks.first)
            claimed = .object(["signed_curve25519:\(keyID)": JSONValue(try sign(.object(["key": .string(key)]), by: "ed25519:\(id)"))])
        }
        return (JSONValue(keys), claimed, curve)
    }

    @Test func invitedMembersGetTheRoomKeyUnlessTheHistoryIsForJoinedMembersOnly() {
        let alice = UserID("@alice:localhost")!, bob = UserID("@bob:localhost")!
        let members: [UserID: Membership] = [alice: .join, bob: .invite]
        for visibility in [nil, "shared", "invited", "world_readable"] as [String?] {
            #expect(Set(GhostDevices.keyRecipients(members, historyVisibility: visibility)) == [alice, bob], "\(visibility ?? "none")")
        }
        #expect(GhostDevices.keyRecipients(members, historyVisibility: "joined") == [alice])
    }

    @Test func theRoomKeyReachesEachSignedDeviceAndTheMessageDecryptsThere() async throws {
        let fixture = try await StoreBackend.sqlite.open()
        let homeserver = GhostDevicesTests.RecordingHomeserver()
        let devices = GhostDevices(store: fixture.store, homeserver: homeserver, pickleKey: .random(), logger: .disabled,
                                   isBridgeUser: { $0.rawValue.hasPrefix("@_xmpp_") })
        let oracle = try await VodozemacOracle.start()
        let phone = try device(oracle, "phone", id: "PHONE", oneTimeKey: true)
        let tablet = try device(oracle, "tablet", id: "TABLET", oneTimeKey: false)
        let forged = try device(oracle, "forged", id: "FORGED", oneTimeKey: true, signed: false)
        homeserver.encryption.withLock { $0 = .object(["algorithm": .string("m.megolm.v1.aes-sha2")]) }
        homeserver.members.withLock { $0 = [alice, ghost] }
        homeserver.deviceKeysAnswer.withLock {
            $0 = .object([alice.rawValue: .object(["PHONE": phone.keys, "TABLET": tablet.keys, "FORGED": forged.keys])])
        }
        homeserver.claimAnswer.withLock { $0 = .object([alice.rawValue: .object(["PHONE": phone.claimed!, "FORGED": forged.claimed!])]) }

        #expect(try await devices.isEncrypted(room, as: ghost))
        let content: JSONValue = .object(["msgtype": .string("m.text"), "body": .string("hello alice"),
                                          "m.relates_to": .object(["m.in_reply_to": .object(["event_id": .string("$q")])])])
        let encrypted = try await devices.encrypt(type: "m.room.message", content: content, in: room, as: ghost)
        #expect(encrypted["m.relates_to"] == content["m.relates_to"], "relations in the clear")
        #expect(homeserver.calls.withLock { $0.filter { $0.hasPrefix("claim") } } == ["claim [\"PHONE\", \"TABLET\"]"],
                "the forged device is never asked for")

        let sent = homeserver.toDevice.withLock { $0 }
        #expect(sent.map(\.kind) == [.encrypted, .withheld])
        #expect(Set(sent[0].messages[alice]?.keys.map(\.rawValue) ?? []) == ["PHONE"])
        #expect(sent[1].messages[alice]?[DeviceID("TABLET")!]?["code"] == .string("m.no_olm"))
        // The phone opens the room key and decrypts the message, as Element would.
        let olm = try #require(sent[0].messages[alice]?[DeviceID("PHONE")!]?["ciphertext"]?[phone.curve])
        let ghostCurve = try #require(sent[0].messages[alice]?[DeviceID("PHONE")!]?["sender_key"]?.stringValue)
        let inbound = try oracle.call("account.inbound", ["name": "phone", "session": "olm", "identity_key": ghostCurve,
                                                          "type": Int(olm["type"]?.integerValue ?? -1), "body": olm["body"]!.stringValue!])
        let roomKey = try JSONDecoder().decode(JSONValue.self, from: Data(try UnpaddedBase64.decode(inbound["plaintext"] as! String)))
        #expect(roomKey["type"] == .string("m.room_key") && roomKey["recipient"] == .string(alice.rawValue))
        #expect(roomKey["content"]?["session_id"] == encrypted["session_id"])
        try oracle.call("inbound.new", ["name": "megolm", "session_key": roomKey["content"]!["session_key"]!.stringValue!])
        let decrypted = try oracle.call("inbound.decrypt", ["name": "megolm", "ciphertext": encrypted["ciphertext"]!.stringValue!])
        let event = try JSONDecoder().decode(JSONValue.self, from: Data(try UnpaddedBase64.decode(decrypted["plaintext"] as! String)))
        #expect(event["type"] == .string("m.room.message") && event["room_id"] == .string(room.rawValue))
        #expect(event["content"]?["body"] == .string("hello alice"))

        // The next message: the same session, already shared — no claim, no to-device message.
        let second = try await devices.encrypt(type: "m.room.message", content: .object(["msgtype": .string("m.text"), "body": .string("again")]),
                                               in: room, as: ghost)
        #expect(second["session_id"] == encrypted["session_id"])
        #expect(homeserver.toDevice.withLock { $0.count } == 2)
        #expect(homeserver.calls.withLock { $0.filter { $0.hasPrefix("claim") }.count } == 1)

        // Alice's device list changed (MSC3202): her devices are read again and the room starts a new session, shared
        // again over the kept Olm session (no claim).
        await devices.noteDeviceListsChanged([alice])
        let third = try await devices.encrypt(type: "m.room.message", content: .object(["msgtype": .string("m.text"), "body": .string("new")]),
                                              in: room, as: ghost)
        #expect(third["session_id"] != encrypted["session_id"])
        #expect(homeserver.toDevice.withLock { $0.map(\.kind) } == [.encrypted, .withheld, .encrypted, .withheld])
        #expect(homeserver.calls.withLock { $0.filter { $0.hasPrefix("claim") } } == ["claim [\"PHONE\", \"TABLET\"]", "claim [\"TABLET\"]"])
    }
}

/// The Matrix client's JSON and canonical JSON carry the same values; a fraction has no canonical form.
@Suite struct CanonicalJSONValueTests {
    @Test func valuesRoundTripAndAFractionIsRefused() throws {
        let value: JSONValue = .object(["a": .array([.null, .bool(true), .integer(-5), .string("é")]), "b": .object([:]), "c": .double(3)])
        let canonical = try #require(CanonicalJSON(value))
        #expect(canonical["c"] == .integer(3), "a whole double is an integer")
        #expect(JSONValue(canonical) == .object(["a": .array([.null, .bool(true), .integer(-5), .string("é")]), "b": .object([:]), "c": .integer(3)]))
        #expect(CanonicalJSON(.object(["x": .array([.double(0.5)])])) == nil)
    }
}
