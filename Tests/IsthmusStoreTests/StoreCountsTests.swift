import IsthmusCommon
import IsthmusStore
import TestSupport
import Testing

/// The counts behind the bridge's gauges, and the receipt that happens once per message (what the message counter
/// relies on).
@Suite struct StoreCountsTests {
    let room = RoomID("!r:localhost")!

    @Test(arguments: StoreBackend.all) func countsLinksByStatusGhostsPuppetsAndInbox(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        #expect(try await store.counts() == StoreCounts(linksByStatus: [:], ghosts: 0, puppets: 0, inbox: 0))
        try await store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: nil, muc: JID("a@muc.localhost")!))
        try await store.insertRoomLink(RoomLink(matrixRoom: RoomID("!s:localhost")!, matrixAlias: nil, muc: JID("b@muc.localhost")!))
        try await store.updateRoomLinkStatus(room, status: .active, detail: nil)
        _ = try await store.recordGhost(UserID("@_xmpp_a:localhost")!, identity: "a@localhost", globalName: "A")
        try await store.savePuppet(Puppet(room: room, user: UserID("@alice:localhost")!, occupant: JID("x@bridge.localhost/y")!,
                                          nick: "Alice", displayname: "Alice", joined: true))
        _ = try await store.enqueueInbox([(room, EventID("$1")!, [1]), (room, EventID("$2")!, [2])])
        #expect(try await store.counts() == StoreCounts(linksByStatus: ["active": 1, "pending": 1], ghosts: 1, puppets: 1, inbox: 2))
    }

    @Test(arguments: StoreBackend.all) func aSecondReflectionOfTheSameMessageIsNotASecondReceipt(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        let originID = OriginID("isthmus-1")!
        _ = try await store.insertMapping(MessageMapping(room: room, eventID: EventID("$e")!, stanzaID: nil, originID: originID,
                                                         direction: .matrixToXMPP, sender: .matrix(UserID("@alice:localhost")!),
                                                         state: .sending, body: "hi"))
        #expect(try await store.recordReflections(room: room, [ReflectionReceipt(originID: originID, stanzaID: StanzaID("s1"))])
                == [originID])
        #expect(try await store.recordReflections(room: room, [ReflectionReceipt(originID: originID, stanzaID: StanzaID("s2"))])
                .isEmpty)
        #expect(try await store.mapping(room: room, originID: originID)?.stanzaID == StanzaID("s1"))
        #expect(try await store.recordReflections(room: room, [ReflectionReceipt(originID: OriginID("other"), stanzaID: nil)])
                .isEmpty)
    }

    @Test(arguments: StoreBackend.all) func aRunOfReflectionsIsRecordedAsIfOneByOneInOneCommit(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        for index in 1...2 {
            _ = try await store.insertMapping(MessageMapping(room: room, eventID: EventID("$e\(index)")!, stanzaID: nil,
                                                             originID: OriginID("isthmus-\(index)")!, direction: .matrixToXMPP,
                                                             sender: .matrix(UserID("@alice:localhost")!), state: .sending, body: "hi"))
        }
        let commits = store.activity.snapshot().commits
        let statements = store.activity.snapshot().statements
        let delivered = try await store.recordReflections(room: room, [
            ReflectionReceipt(originID: OriginID("isthmus-1")!, stanzaID: StanzaID("s1")),
            ReflectionReceipt(originID: nil, stanzaID: StanzaID("s2")),                        // someone else's message
            ReflectionReceipt(originID: OriginID("isthmus-1")!, stanzaID: StanzaID("s3")),     // a second copy: no receipt
            ReflectionReceipt(originID: OriginID("isthmus-2")!, stanzaID: StanzaID("s4")),
            ReflectionReceipt(originID: nil, stanzaID: nil),
        ])
        #expect(delivered == [OriginID("isthmus-1")!, OriginID("isthmus-2")!])
        #expect(store.activity.snapshot().commits == commits + 1)
        // Three receipts of ours in two multi-row updates (2 + 1), and the resume point: not one statement each. On
        // PostgreSQL the resume point rides in the first update's `WITH` (one round trip less).
        #expect(store.activity.snapshot().statements - statements == (backend == .postgres ? 2 : 3))
        #expect(try await store.mapping(room: room, originID: OriginID("isthmus-1")!)?.stanzaID == StanzaID("s1"))
        #expect(try await store.mapping(room: room, originID: OriginID("isthmus-2")!)?.state == .delivered)
        // The resume point is where the last reflection put it: the copy's s3 moved it, then s4.
        #expect(try await store.lastStanzaID(room) == StanzaID("s4"))
        #expect(try await store.recordReflections(room: room, [ReflectionReceipt(originID: OriginID("isthmus-2")!, stanzaID: StanzaID("s5"))]).isEmpty)
        #expect(try await store.lastStanzaID(room) == StanzaID("s5"))
    }

    /// Issue 26: an XMPP message bridged to Matrix is its map row and the room's new resume point — one statement (one
    /// round trip) on PostgreSQL; a message the store has mapped already still moves the resume point.
    @Test(arguments: StoreBackend.all) func aBridgedXMPPMessageAndItsResumePointAreOneStatementOnPostgreSQL(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        func row(_ index: Int, stanza: String) -> MessageMapping {
            MessageMapping(room: room, eventID: EventID("$x\(index)")!, stanzaID: StanzaID(stanza), originID: nil, direction: .xmppToMatrix,
                           sender: .occupant(.nick("romeo")), state: .delivered, body: "hi")
        }
        let statements = store.activity.snapshot().statements
        try await store.recordBridgedFromXMPP(row(1, stanza: "s1"))
        #expect(store.activity.snapshot().statements - statements == (backend == .postgres ? 1 : 2))
        #expect(try await store.lastStanzaID(room) == StanzaID("s1"))
        #expect(try await store.mapping(room: room, stanzaID: StanzaID("s1")!)?.eventID == EventID("$x1"))
        try await store.recordBridgedFromXMPP(row(1, stanza: "s2"))   // the same event again: not mapped twice
        #expect(try await store.lastStanzaID(room) == StanzaID("s2"))
        #expect(try await store.mapping(room: room, stanzaID: StanzaID("s2")!) == nil)
    }
}
