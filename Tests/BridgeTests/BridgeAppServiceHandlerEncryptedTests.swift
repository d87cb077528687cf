@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixAppService
import Testing

/// Encrypted events of a linked room are queued (their portal tells the room), and counted once each.
@Suite struct BridgeAppServiceHandlerEncryptedTests {
    let linkedRoom = RoomID("!linked:localhost")!

    func transaction(_ id: String, _ events: String) throws -> Transaction {
        try TransactionDecoder.decode(Data(#"{"events": [\#(events)]}"#.utf8), id: #require(TransactionID(id))).get()
    }

    var encryptedEvent: String {
        #"{"type": "m.room.encrypted", "event_id": "$enc", "room_id": "\#(linkedRoom.rawValue)", "sender": "@alice:localhost", "origin_server_ts": 1, "content": {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgAEn...", "device_id": "DEV", "sender_key": "k", "session_id": "s"}}"#
    }

    @Test func anEncryptedEventAndTurningEncryptionOnAreKeptForThePortal() throws {
        let enabled = #"{"type": "m.room.encryption", "state_key": "", "event_id": "$on", "room_id": "\#(linkedRoom.rawValue)", "sender": "@alice:localhost", "origin_server_ts": 1, "content": {"algorithm": "m.megolm.v1.aes-sha2"}}"#
        let events = try transaction("t1", encryptedEvent + "," + enabled).events.compactMap(BridgeAppServiceHandler.roomEvent)
        #expect(events.map(\.content) == [.encrypted, .encryptionEnabled])
        #expect(events.map(\.eventID.rawValue) == ["$enc", "$on"])
        // Not a room's state: not the room turning encryption on.
        let stray = #"{"type": "m.room.encryption", "state_key": "x", "event_id": "$x", "room_id": "!r:localhost", "sender": "@alice:localhost", "origin_server_ts": 1, "content": {}}"#
        #expect(try transaction("t2", stray).events.compactMap(BridgeAppServiceHandler.roomEvent).isEmpty)
    }

    @Test func anInvitationSaysWhetherItsRoomIsEncryptedFromItsRoomState() throws {
        func invite(_ state: String) -> String {
            #"{"type": "m.room.member", "state_key": "@_xmpp_romeo:localhost", "event_id": "$i", "room_id": "!dm:localhost", "sender": "@alice:localhost", "origin_server_ts": 1, "content": {"membership": "invite", "is_direct": true}\#(state)}"#
        }
        let encrypted = #", "unsigned": {"invite_room_state": [{"type": "m.room.create", "state_key": "", "sender": "@alice:localhost", "content": {}}, {"type": "m.room.encryption", "state_key": "", "sender": "@alice:localhost", "content": {"algorithm": "m.megolm.v1.aes-sha2"}}]}"#
        let plain = #", "unsigned": {"invite_room_state": [{"type": "m.room.create", "state_key": "", "sender": "@alice:localhost", "content": {}}]}"#
        let events = try transaction("t3", [invite(encrypted), invite(plain), invite("")].joined(separator: ","))
            .events.compactMap(BridgeAppServiceHandler.roomEvent)
        #expect(events.map(\.invitedToEncryptedRoom) == [true, false, nil])
        #expect(events.allSatisfy { $0.isDirect == true })
    }

    @Test func anEncryptedEventIsQueuedAndCountedOnceEvenWhenTheTransactionComesAgain() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        try await store.insertRoomLink(RoomLink(matrixRoom: linkedRoom, matrixAlias: nil, muc: JID("lounge@conference.localhost")!))
        let bridge = Bridge(store: store, xmpp: FakeXMPPLink(), matrix: FakeMatrixLink(),
                            naming: BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!, logger: .disabled)
        let handler = BridgeAppServiceHandler(bridge: bridge, namespace: GhostNamespace(prefix: "_xmpp_", serverName: "localhost", botLocalpart: "isthmus")!,
                                              logger: .disabled)
        try await handler.handle(transaction("t1", encryptedEvent))
        try await handler.handle(transaction("t1", encryptedEvent))   // a retry the homeserver sends again
        #expect(try await store.inbox(linkedRoom).map(\.eventID.rawValue) == ["$enc"])
        let text = bridge.metrics.exposition()
        #expect(text.contains(#"isthmus_encrypted_events_total{room="linked"} 1"#))
        #expect(text.contains(#"isthmus_encrypted_events_total{room="direct"} 0"#))
    }
}
