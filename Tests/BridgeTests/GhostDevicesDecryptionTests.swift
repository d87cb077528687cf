@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixCrypto
import TestSupport
import Testing

/// A Matrix user's device (vodozemac 0.10.0, the library Element uses) shares a room key with a ghost's device over
/// Olm; the ghost's side keeps it and decrypts the user's encrypted events — and refuses replays, other senders and
/// messages not meant for it.
@Suite struct GhostDevicesDecryptionTests {
    let ghost = UserID("@_xmpp_romeo:localhost")!
    let alice = UserID("@alice:localhost")!
    let room = RoomID("!dm:localhost")!

    /// The ghost's device ready, alice's oracle account with an Olm session to it and a Megolm session "g".
    struct Scene {
        let fixture: StoreFixture
        let devices: GhostDevices
        let key: PickleKey
        let oracle: VodozemacOracle
        let device: DeviceID
        let ghostCurve: String
        let ghostEd: String
        let aliceCurve: String
        let aliceEd: String
        let sessionID: String
        let sessionKey: String
    }

    func scene() async throws -> Scene {
        let fixture = try await StoreBackend.sqlite.open()
        // Room keys are kept only for the rooms the bridge serves.
        try await fixture.store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: nil, muc: JID("lounge@conference.localhost")!))
        let homeserver = GhostDevicesTests.RecordingHomeserver()
        let key = PickleKey.random()
        let devices = GhostDevices(store: fixture.store, homeserver: homeserver, pickleKey: key, logger: .disabled)
        let device = try await devices.device(of: ghost)
        let published = try #require(homeserver.published.withLock { $0.first })
        let deviceKeys = try #require(published.deviceKeys)
        guard case .string(let ghostCurve)? = deviceKeys["keys"]?["curve25519:\(device)"],
              case .string(let ghostEd)? = deviceKeys["keys"]?["ed25519:\(device)"],
              case .string(let oneTimeKey)? = published.oneTime.values.first?["key"] else { throw Missing() }
        let oracle = try await VodozemacOracle.start()
        let aliceKeys = try oracle.call("account.new", ["name": "alice"])
        try oracle.call("account.outbound", ["name": "alice", "session": "olm", "identity_key": ghostCurve, "one_time_key": oneTimeKey])
        let group = try oracle.call("group.new", ["name": "g"])
        return Scene(fixture: fixture, devices: devices, key: key, oracle: oracle, device: device, ghostCurve: ghostCurve, ghostEd: ghostEd,
                     aliceCurve: aliceKeys["curve25519"] as! String, aliceEd: aliceKeys["ed25519"] as! String,
                     sessionID: group["session_id"] as! String, sessionKey: group["session_key"] as! String)
    }

    struct Missing: Error {}

    /// Alice's `m.room_key` for the ghost, Olm-encrypted as her client sends it; `payload` overrides fields.
    func roomKeyMessage(_ scene: Scene, payload overrides: [String: Any] = [:], to recipient: UserID? = nil) throws -> ToDeviceEvent {
        var payload: [String: Any] = [
            "type": "m.room_key", "sender": alice.rawValue, "recipient": ghost.rawValue, "sender_device": "ALICEDEV",
            "recipient_keys": ["ed25519": scene.ghostEd], "keys": ["ed25519": scene.aliceEd],
            "content": ["algorithm": "m.megolm.v1.aes-sha2", "room_id": room.rawValue, "session_id": scene.sessionID,
                        "session_key": scene.sessionKey],
        ]
        payload.merge(overrides) { $1 }
        let plaintext = String(decoding: try JSONSerialization.data(withJSONObject: payload), as: UTF8.self)
        let olm = try scene.oracle.call("session.encrypt", ["session": "olm", "plaintext": plaintext.base64UTF8])
        let content: JSONValue = .object([
            "algorithm": .string("m.olm.v1.curve25519-aes-sha2"), "sender_key": .string(scene.aliceCurve),
            "ciphertext": .object([scene.ghostCurve: .object(["type": .integer(Int64(olm["type"] as! Int)), "body": .string(olm["body"] as! String)])]),
        ])
        return ToDeviceEvent(type: "m.room.encrypted", sender: alice, recipient: recipient ?? ghost, recipientDevice: scene.device, content: content)
    }

    /// Alice's encrypted text message with the Megolm session, as the room event the homeserver pushes.
    func encryptedEvent(_ scene: Scene, _ body: String, id: String, sender: UserID? = nil, room: RoomID? = nil,
                        relatesTo: String? = nil) throws -> ClientEvent {
        let inner = #"{"type":"m.room.message","room_id":"\#((room ?? self.room).rawValue)","content":{"msgtype":"m.text","body":"\#(body)"}}"#
        let ciphertext = try scene.oracle.string("group.encrypt", ["name": "g", "plaintext": inner.base64UTF8], "ciphertext")
        let relation = relatesTo.map { #", "m.relates_to": {"rel_type": "m.thread", "event_id": "\#($0)"}"# } ?? ""
        let json = #"{"type": "m.room.encrypted", "event_id": "\#(id)", "room_id": "\#((room ?? self.room).rawValue)", "sender": "\#((sender ?? alice).rawValue)", "origin_server_ts": 1, "content": {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "\#(ciphertext)", "session_id": "\#(scene.sessionID)", "sender_key": "\#(scene.aliceCurve)", "device_id": "ALICEDEV"\#(relation)}}"#
        return try JSONDecoder().decode(ClientEvent.self, from: Data(json.utf8))
    }

    func body(_ result: GhostDevices.RoomDecryption) -> String? {
        if case .decrypted(let event) = result, case .message(let content) = event.content { return content.body }
        return nil
    }

    @Test func aRoomKeySharedOverOlmDecryptsTheUsersMessagesAcrossARestart() async throws {
        let scene = try await scene()
        let first = try encryptedEvent(scene, "hello romeo", id: "$1")
        #expect(try await scene.devices.decrypt(first) == .missingKey(sessionID: scene.sessionID), "before the key: missing, not refused")

        #expect(try await scene.devices.receive([roomKeyMessage(scene)]) == [.roomKey(room: room, sessionID: scene.sessionID)])
        let decrypted = try await scene.devices.decrypt(first)
        #expect(body(decrypted) == "hello romeo")
        if case .decrypted(let event) = decrypted {
            #expect(event.eventID == first.eventID && event.sender == alice && event.roomID == room)
        }
        #expect(body(try await scene.devices.decrypt(first)) == "hello romeo", "the same event again (a transaction sent again)")

        // The relation stays in the clear and comes back on the decrypted event.
        let threaded = try await scene.devices.decrypt(try encryptedEvent(scene, "in a thread", id: "$2", relatesTo: "$root"))
        if case .decrypted(let event) = threaded, case .message(let content) = event.content {
            #expect(content.relatesTo?.eventID?.rawValue == "$root")
        } else { Issue.record("not decrypted: \(threaded)") }

        // A restart: the key and the Olm session were kept; a second key message on the same Olm session decrypts.
        let restarted = GhostDevices(store: scene.fixture.store, homeserver: GhostDevicesTests.RecordingHomeserver(),
                                     pickleKey: scene.key, logger: .disabled)
        #expect(body(try await restarted.decrypt(try encryptedEvent(scene, "after a restart", id: "$3"))) == "after a restart")
        #expect(try await restarted.receive([roomKeyMessage(scene)]) == [.roomKey(room: room, sessionID: scene.sessionID)])
    }

    @Test func anEventBeforeItsKeyIsHeldThenReleasedByTheKeyOrToldAfterTheWait() async throws {
        let scene = try await scene()
        let early = try encryptedEvent(scene, "before the key", id: "$early")
        let t0 = Date()
        #expect(try await scene.devices.hold([(early, scene.sessionID)], now: t0) == [early.eventID])
        // A room the bridge does not serve: not held.
        var stray = try encryptedEvent(scene, "elsewhere", id: "$stray")
        stray.roomID = RoomID("!unserved:localhost")!
        #expect(try await scene.devices.hold([(stray, scene.sessionID)], now: t0).isEmpty)
        // Within the wait and without the key: nothing is due, nothing released.
        #expect(try await scene.devices.expired(now: t0 + 5).ids.isEmpty)
        #expect(try await scene.devices.released(by: [(room, scene.sessionID)]).isEmpty)

        // The key comes: the held event is released, decrypted; once forgotten it is gone.
        try await scene.devices.receive([roomKeyMessage(scene)])
        let released = try await scene.devices.released(by: [(room, scene.sessionID)])
        #expect(released.map(\.eventID) == [early.eventID])
        #expect(body(.decrypted(try #require(released.first))) == "before the key")
        try await scene.devices.forgetHeld(released.map(\.eventID))
        #expect(try await scene.devices.expired(now: t0 + 60).ids.isEmpty)

        // Another that never gets its key: after the wait it comes back as it was (the room is told).
        let orphan = try encryptedEvent(scene, "never", id: "$orphan")
        var lost = orphan
        guard case .unknown(_, var content) = orphan.content, case .object(var members) = content else { Issue.record("not encrypted"); return }
        members["session_id"] = .string("an unknown session")
        content = .object(members)
        lost.content = .unknown(type: "m.room.encrypted", content: content)
        _ = try await scene.devices.hold([(lost, "an unknown session")], now: t0)
        let (due, ids) = try await scene.devices.expired(now: t0 + Double(GhostDevices.keyWait.components.seconds) + 1)
        #expect(ids == [lost.eventID] && due == [lost])
    }

    @Test func aMissingKeyIsAskedForOncePerSessionFromTheGhostsDeviceInTheRoom() async throws {
        let scene = try await scene()
        let homeserver = try #require(await scene.devices.homeserver as? GhostDevicesTests.RecordingHomeserver)
        try await scene.fixture.store.saveRoomGhost(RoomGhost(room: room, user: ghost, nick: "Romeo", occupantID: nil, realJID: nil, joined: true))
        _ = try await scene.devices.hold([(try encryptedEvent(scene, "one", id: "$1"), scene.sessionID),
                                          (try encryptedEvent(scene, "two", id: "$2"), scene.sessionID)])
        let requests = homeserver.toDevice.withLock { $0 }.filter { $0.kind == .keyRequest }
        #expect(requests.count == 1, "once per session")
        let request = try #require(requests.first)
        #expect(request.sender == ghost)
        let message = try #require(request.messages[alice]?[DeviceID("*")!])
        #expect(message["action"] == .string("request"))
        #expect(message["requesting_device_id"] == .string(scene.device.rawValue))
        #expect(message["body"]?["session_id"] == .string(scene.sessionID) && message["body"]?["room_id"] == .string(room.rawValue))
        #expect(message["body"]?["sender_key"] == .string(scene.aliceCurve))
    }

    @Test func aForwardedKeyAnsweringARequestDecryptsTheSendersEvents() async throws {
        let scene = try await scene()
        try scene.oracle.call("inbound.new", ["name": "copy", "session_key": scene.sessionKey])
        let exported = try scene.oracle.string("inbound.export", ["name": "copy", "index": 0], "exported")
        let forwarded = try roomKeyMessage(scene, payload: ["type": "m.forwarded_room_key", "content": [
            "algorithm": "m.megolm.v1.aes-sha2", "room_id": room.rawValue, "session_id": scene.sessionID, "session_key": exported,
            "sender_key": scene.aliceCurve, "sender_claimed_ed25519_key": scene.aliceEd, "forwarding_curve25519_key_chain": [String](),
        ]])
        #expect(try await scene.devices.receive([forwarded]) == [.roomKey(room: room, sessionID: scene.sessionID)])
        #expect(body(try await scene.devices.decrypt(try encryptedEvent(scene, "answered", id: "$f"))) == "answered")
        // A forwarded key that does not parse as an exported session is refused.
        let broken = try roomKeyMessage(scene, payload: ["type": "m.forwarded_room_key", "content": [
            "algorithm": "m.megolm.v1.aes-sha2", "room_id": room.rawValue, "session_id": scene.sessionID, "session_key": scene.sessionKey]])
        #expect(try await scene.devices.receive([broken]) == [.refused(.invalidRoomKey)])
    }

    @Test func replaysOtherSendersAndForeignMessagesAreRefused() async throws {
        let scene = try await scene()
        try await scene.devices.receive([roomKeyMessage(scene)])
        let original = try encryptedEvent(scene, "once", id: "$1")
        #expect(body(try await scene.devices.decrypt(original)) == "once")
        guard case .unknown(_, let content) = original.content else { Issue.record("not encrypted"); return }
        let replay = GhostDevices.replacing(original, type: "m.room.encrypted", content: content)
        var replayed = try #require(replay)
        replayed.eventID = EventID("$replayed")!
        #expect(try await scene.devices.decrypt(replayed) == .refused(.replayedMessageIndex))

        // A room key only decrypts the events of the user whose device shared it.
        let mallory = UserID("@mallory:localhost")!
        #expect(try await scene.devices.decrypt(try encryptedEvent(scene, "spoofed", id: "$m", sender: mallory))
                == .missingKey(sessionID: scene.sessionID))
        // Encrypted for this room, pushed as another room's event.
        let elsewhere = try encryptedEvent(scene, "moved", id: "$x")
        var moved = try #require(GhostDevices.replacing(elsewhere, type: "m.room.encrypted", content: { if case .unknown(_, let c) = elsewhere.content { c } else { .null } }()))
        moved.roomID = RoomID("!other:localhost")!
        #expect(try await scene.devices.decrypt(moved) == .missingKey(sessionID: scene.sessionID))

        // A key message naming another recipient, or for a ghost without this device, is refused and keeps nothing.
        let wrongRecipient = try roomKeyMessage(scene, payload: ["recipient": "@_xmpp_juliet:localhost"])
        #expect(try await scene.devices.receive([wrongRecipient]) == [.refused(.payloadMismatch)])
        let otherGhost = try roomKeyMessage(scene, to: UserID("@_xmpp_juliet:localhost")!)
        #expect(try await scene.devices.receive([otherGhost]) == [.refused(.notForOurDevice)])
        let notOlm = ToDeviceEvent(type: "m.room.encrypted", sender: alice, recipient: ghost, recipientDevice: scene.device,
                                   content: .object(["algorithm": .string("m.megolm.v1.aes-sha2")]))
        #expect(try await scene.devices.receive([notOlm]) == [.refused(.notOlm)])
        let plain = ToDeviceEvent(type: "m.dummy", sender: alice, recipient: ghost, recipientDevice: scene.device, content: .object([:]))
        #expect(try await scene.devices.receive([plain]) == [.other(type: "m.dummy")])
        // A key for a room the bridge does not serve keeps nothing.
        let elsewhereKey = try roomKeyMessage(scene, payload: ["content": [
            "algorithm": "m.megolm.v1.aes-sha2", "room_id": "!other:localhost", "session_id": scene.sessionID, "session_key": scene.sessionKey]])
        #expect(try await scene.devices.receive([elsewhereKey]) == [.refused(.roomKeyForUnservedRoom)])
    }

    @Test func aReplayedPreKeyMessageIsRefusedAndLeavesTheSessionAsItWas() async throws {
        let scene = try await scene()
        let first = try roomKeyMessage(scene)
        #expect(try await scene.devices.receive([first]) == [.roomKey(room: room, sessionID: scene.sessionID)])
        // The same pre-key message again: its session is known and has moved on, so it does not decrypt; refused.
        #expect(try await scene.devices.receive([first]) == [.refused(.preKeyMessageNotDecryptedBySession)])
        // The session still works: alice's next message on it (a pre-key message too, no answer yet) is taken.
        #expect(try await scene.devices.receive([roomKeyMessage(scene)]) == [.roomKey(room: room, sessionID: scene.sessionID)])
        #expect(try await scene.fixture.store.olmSessions(of: ghost, with: scene.aliceCurve).count == 1)
    }

    @Test func onlyMessagesReactionsAndStickersAreDecrypted() async throws {
        let scene = try await scene()
        try await scene.devices.receive([roomKeyMessage(scene)])
        let inner = #"{"type":"m.room.redaction","room_id":"\#(room.rawValue)","content":{"redacts":"$victim"}}"#
        let ciphertext = try scene.oracle.string("group.encrypt", ["name": "g", "plaintext": inner.base64UTF8], "ciphertext")
        let json = #"{"type": "m.room.encrypted", "event_id": "$r", "room_id": "\#(room.rawValue)", "sender": "\#(alice.rawValue)", "origin_server_ts": 1, "content": {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "\#(ciphertext)", "session_id": "\#(scene.sessionID)"}}"#
        let event = try JSONDecoder().decode(ClientEvent.self, from: Data(json.utf8))
        #expect(try await scene.devices.decrypt(event) == .refused(.typeNeverEncrypted))
    }
}

/// The appservice handler with the ghosts' devices: an encrypted event whose key comes in a later transaction is held,
/// then queued decrypted with that transaction — never told as undecryptable meanwhile.
@Suite struct HeldEncryptedEventIntakeTests {
    @Test func anEventBeforeItsKeyIsQueuedDecryptedWithTheTransactionThatBringsTheKey() async throws {
        let helper = GhostDevicesDecryptionTests()
        let scene = try await helper.scene()
        let store = scene.fixture.store
        let bridge = Bridge(store: store, xmpp: FakeXMPPLink(), matrix: FakeMatrixLink(),
                            naming: BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!, logger: .disabled,
                            encryption: Bridge.EncryptionWiring(devices: scene.devices))
        let handler = BridgeAppServiceHandler(bridge: bridge, namespace: GhostNamespace(prefix: "_xmpp_", serverName: "localhost",
                                                                                        botLocalpart: "isthmus")!, logger: .disabled)
        let event = try helper.encryptedEvent(scene, "the early bird", id: "$early")
        try await handler.handle(Transaction(id: TransactionID("t1")!, events: [event]))
        #expect(try await store.inbox(helper.room).isEmpty, "held, not queued as undecryptable")

        try await handler.handle(Transaction(id: TransactionID("t2")!, events: [], toDevice: [helper.roomKeyMessage(scene)]))
        let queued = try await store.inbox(helper.room)
        #expect(queued.map(\.eventID) == [event.eventID])
        let decoded = try JSONDecoder().decode(MatrixRoomEvent.self, from: Data(try #require(queued.first).payload))
        #expect(decoded.content == .message(msgtype: .text, body: "the early bird"))
        #expect(try await store.heldEncryptedEvents(heldBefore: Int64.max).isEmpty, "released once queued")
    }
}
