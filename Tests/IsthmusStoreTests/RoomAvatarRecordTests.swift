import Foundation
import IsthmusCommon
import IsthmusStore
import TestSupport
import Testing

/// The MUC avatar a link last applied to its Matrix room (migration 12).
@Suite struct RoomAvatarRecordTests {
    let room = RoomID("!room:localhost")!

    @Test(arguments: StoreBackend.all) func theAppliedAvatarIsKeptBesideTheRoomsOtherStateAndCanBeCleared(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        #expect(try await store.roomAvatar(room) == nil)
        try await store.setLastStanzaID(room, StanzaID("s1")!)
        let record = RoomAvatarRecord(sha1: String(repeating: "a", count: 40), mxc: "mxc://localhost/abc")
        try await store.setRoomAvatar(room, record)
        try await store.setKnownSubject(room, "Topic")
        #expect(try await store.roomAvatar(room) == record)
        #expect(try await store.lastStanzaID(room) == StanzaID("s1"), "the resume point in the same row is untouched")
        #expect(try await store.roomTexts(room).subject == "Topic")
        try await store.setRoomAvatar(room, nil)
        #expect(try await store.roomAvatar(room) == nil)
        #expect(try await store.lastStanzaID(room) == StanzaID("s1"))
    }
}
