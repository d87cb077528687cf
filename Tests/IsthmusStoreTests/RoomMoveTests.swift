import Foundation
import IsthmusCommon
import IsthmusStore
import TestSupport
import Testing

/// A link's subject, name and `--sync-name` flag, and its move to an upgraded room's replacement (migration 10).
@Suite struct RoomMoveTests {
    let old = RoomID("!old:localhost")!
    let new = RoomID("!new:localhost")!
    let muc = JID("lounge@muc.localhost")!

    @Test(arguments: StoreBackend.all) func subjectNameAndSyncNameAreKeptPerLink(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        try await store.insertRoomLink(RoomLink(matrixRoom: old, matrixAlias: nil, muc: muc, syncName: true))
        #expect(try await store.roomLinks().map(\.syncName) == [true])
        #expect(try await store.roomTexts(old) == RoomTexts())
        try await store.setKnownSubject(old, "Topic")
        try await store.setKnownRoomName(old, "Lounge")
        try await store.setKnownSubject(old, "Topic 2")
        #expect(try await store.roomTexts(old) == RoomTexts(subject: "Topic 2", name: "Lounge"))
        // The resume point lives in the same row and is untouched.
        try await store.setLastStanzaID(old, StanzaID("s9")!)
        #expect(try await store.roomTexts(old) == RoomTexts(subject: "Topic 2", name: "Lounge"))
        #expect(try await store.lastStanzaID(old) == StanzaID("s9"))
    }

    @Test(arguments: StoreBackend.all) func aMoveTakesTheLinksStateAlongAndDropsTheOldRoomsInbox(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        try await store.insertRoomLink(RoomLink(matrixRoom: old, matrixAlias: RoomAlias("#old:localhost"), muc: muc, syncName: true))
        try await store.setLastStanzaID(old, StanzaID("s1")!)
        try await store.setKnownSubject(old, "Topic")
        let ghost = UserID("@_xmpp_romeo:localhost")!
        try await store.saveRoomGhost(RoomGhost(room: old, user: ghost, nick: "romeo", occupantID: nil, realJID: nil, joined: true))
        let alice = UserID("@alice:localhost")!
        try await store.savePuppet(Puppet(room: old, user: alice, occupant: JID("alice@bridge.localhost/x")!, nick: "Alice",
                                          displayname: "Alice", joined: true))
        let mapping = MessageMapping(room: old, eventID: EventID("$e1")!, stanzaID: StanzaID("s1")!, originID: nil,
                                     direction: .xmppToMatrix, sender: .occupant(.nick("romeo")), state: .delivered)
        _ = try await store.insertMapping(mapping)
        _ = try await store.enqueueInbox([(old, EventID("$late")!, Array("{}".utf8))])
        let dm = RoomID("!dm:localhost")!
        try await store.saveDirectChat(DirectChat(linkedRoom: old, identity: "romeo@localhost", matrixUser: alice, muc: muc,
                                                  ghost: ghost, matrixRoom: dm))

        let moved = try #require(try await store.moveRoomLink(from: old, to: new))
        #expect(moved.matrixRoom == new && moved.matrixAlias == nil && moved.muc == muc && moved.syncName)
        #expect(try await store.roomLinks().map(\.matrixRoom) == [new])
        #expect(try await store.lastStanzaID(new) == StanzaID("s1"))
        #expect(try await store.roomTexts(new).subject == "Topic")
        // Ghosts are not in the new room yet: they join it as their occupants are seen.
        #expect(try await store.roomGhosts(new).map(\.joined) == [false])
        #expect(try await store.puppets(new).map(\.user) == [alice])
        #expect(try await store.mapping(room: new, eventID: EventID("$e1")!)?.stanzaID == StanzaID("s1"))
        #expect(try await store.inbox(old).isEmpty)
        #expect(try await store.directChat(in: dm)?.linkedRoom == new)
        #expect(try await store.roomGhosts(old).isEmpty)
        // Moved already: nothing to move.
        #expect(try await store.moveRoomLink(from: old, to: new) == nil)
    }

    @Test(arguments: StoreBackend.all) func aMoveOntoALinkedRoomIsRefused(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        try await store.insertRoomLink(RoomLink(matrixRoom: old, matrixAlias: nil, muc: muc))
        try await store.insertRoomLink(RoomLink(matrixRoom: new, matrixAlias: nil, muc: JID("other@muc.localhost")!))
        await #expect(throws: RoomLinkConflict.self) { try await store.moveRoomLink(from: old, to: new) }
        #expect(try await store.roomLinks().map(\.matrixRoom) == [old, new])
    }
}

extension RoomMoveTests {
    @Test(arguments: StoreBackend.all) func aDestroyedMUCIsRecordedWithTheLink(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        try await store.insertRoomLink(RoomLink(matrixRoom: old, matrixAlias: nil, muc: muc))
        #expect(try await store.roomLinks().map(\.mucDestroyed) == [false])
        try await store.markRoomLinkDestroyed(old, detail: "the XMPP room was destroyed")
        let link = try #require(try await store.roomLinks().first)
        #expect(link.mucDestroyed && link.status == .error && link.detail == "the XMPP room was destroyed")
    }
}
