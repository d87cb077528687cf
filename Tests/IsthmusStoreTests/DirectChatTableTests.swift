import IsthmusCommon
import IsthmusStore
import TestSupport
import Testing

@Suite struct DirectChatTableTests {
    let linked = RoomID("!linked:localhost")!
    let dm = RoomID("!dm:localhost")!
    let alice = UserID("@alice:localhost")!
    let ghost = UserID("@_xmpp_romeo:localhost")!
    let muc = JID("lounge@conference.localhost")!

    @Test(arguments: StoreBackend.all) func aPairHasOneDMRoomWhichCanBeForgottenAndReplaced(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        var chat = DirectChat(linkedRoom: linked, identity: "romeo@localhost", matrixUser: alice, muc: muc, ghost: ghost)
        try await store.saveDirectChat(chat)   // recorded before the room exists
        #expect(try await store.directChat(linkedRoom: linked, ghost: ghost, user: alice) == chat)
        #expect(try await store.directRooms(of: linked) == [])
        chat.matrixRoom = dm
        try await store.saveDirectChat(chat)
        #expect(try await store.directChat(in: dm) == chat)
        #expect(try await store.directRooms(among: [dm, linked]) == [dm])
        // Another user's DM with the same ghost is another pair.
        let bob = UserID("@bob:localhost")!
        #expect(try await store.directChat(linkedRoom: linked, ghost: ghost, user: bob) == nil)
        // The user left: forgotten, then a new room.
        chat.matrixRoom = nil
        try await store.saveDirectChat(chat)
        #expect(try await store.directChat(in: dm) == nil)
        chat.matrixRoom = RoomID("!dm2:localhost")!
        try await store.saveDirectChat(chat)
        #expect(try await store.directRooms(of: linked) == [RoomID("!dm2:localhost")!])
        #expect(try await store.directRooms(of: RoomID("!other:localhost")!) == [])
    }

    @Test(arguments: StoreBackend.all) func aHandledDMEventIsNotPendingAgainWhenReplayed(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        let event = EventID("$e1")!
        let first = try await store.enqueueInbox([(dm, event, [1])])
        #expect(try await store.isDirectEventPending(seq: first[0].seq, eventID: event))
        try await store.consumeDirectEvent(seq: first[0].seq, eventID: event, room: dm)
        #expect(try await store.inbox(dm).isEmpty)
        #expect(try await !store.isDirectEventPending(seq: first[0].seq, eventID: event))
        // A replay queues it again; it is found handled and its row dropped.
        let replay = try await store.enqueueInbox([(dm, event, [1])])
        #expect(try await !store.isDirectEventPending(seq: replay[0].seq, eventID: event))
        #expect(try await store.inbox(dm).isEmpty)
    }

    @Test(arguments: StoreBackend.all) func theRoomsAUserAndAGhostShareAreTheLinkedOnesWithBothInLinkOrder(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        let rooms = ["a", "b", "c", "d"].map { RoomID("!\($0):localhost")! }
        for (index, room) in rooms.enumerated() {
            try await store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: nil, muc: JID("m\(index)@conference.localhost")!))
        }
        func occupants(_ room: RoomID, ghostJoined: Bool?, aliceJoined: Bool?) async throws {
            if let ghostJoined {
                try await store.saveRoomGhost(RoomGhost(room: room, user: ghost, nick: "Romeo", occupantID: nil, realJID: nil, joined: ghostJoined))
            }
            if let aliceJoined {
                try await store.savePuppet(Puppet(room: room, user: alice, occupant: JID("alice@bridge.localhost/isthmus")!, nick: "alice",
                                                  displayname: "alice", joined: aliceJoined))
            }
        }
        try await occupants(rooms[0], ghostJoined: true, aliceJoined: nil)      // alice has no occupant there
        try await occupants(rooms[1], ghostJoined: false, aliceJoined: true)
        try await occupants(rooms[2], ghostJoined: true, aliceJoined: true)
        try await occupants(rooms[3], ghostJoined: true, aliceJoined: true)
        _ = try await store.markUnlinking(matrixRoom: rooms[3])                  // going away: not a place for a DM
        #expect(try await store.sharedRooms(ghost: ghost, user: alice) == [
            SharedRoom(linkedRoom: rooms[1], muc: JID("m1@conference.localhost")!, ghostJoined: false, userJoined: true),
            SharedRoom(linkedRoom: rooms[2], muc: JID("m2@conference.localhost")!, ghostJoined: true, userJoined: true),
        ])
        #expect(try await store.sharedRooms(ghost: ghost, user: UserID("@bob:localhost")!) == [])
    }
}
