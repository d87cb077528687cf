import FoundationEssentials
import IsthmusCommon
@testable import IsthmusStore
import TestSupport
import Testing

/// ``Store/activateRoom(_:at:)``: one call that reads what the room's portal starts from, the same as the reads
/// one by one, and records the first activation once.
@Suite struct RoomActivationTests {
    let room = RoomID("!room:localhost")!
    let alice = UserID("@alice:localhost")!
    let ghost = UserID("@_xmpp_romeo:localhost")!

    @Test(arguments: StoreBackend.all) func aFreshRoomIsAFirstActivationThenNoLonger(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        let first = try await store.activateRoom(room, at: Date(timeIntervalSince1970: 1_700_000_000))
        #expect(first.firstActivation)
        #expect(first.activeSince == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(first.puppets.isEmpty && first.ghosts.isEmpty && first.undelivered.isEmpty)
        #expect(first.lastStanzaID == nil && first.avatar == nil && first.texts == RoomTexts())
        let second = try await store.activateRoom(room, at: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(!second.firstActivation)
        #expect(second.activeSince == Date(timeIntervalSince1970: 1_700_000_000), "the first time stays")
    }

    @Test(arguments: StoreBackend.all) func itReadsWhatTheReadsOneByOneRead(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        _ = try await store.activateRoom(room, at: Date(timeIntervalSince1970: 1_700_000_000))
        try await store.savePuppet(Puppet(room: room, user: alice, occupant: JID("room@muc.localhost/Alice")!, nick: "Alice",
                                          displayname: "Alice A.", joined: true))
        try await store.saveRoomGhost(RoomGhost(room: room, user: ghost, nick: "romeo", occupantID: OccupantID("occ-romeo"),
                                                realJID: JID("romeo@example.org"), joined: true))
        _ = try await store.insertMapping(MessageMapping(
            room: room, eventID: EventID("$m1"), stanzaID: nil, originID: OriginID("o1"), direction: .matrixToXMPP,
            sender: .matrix(alice), state: .sending, body: "hi", nick: "Alice"))
        try await store.setLastStanzaID(room, StanzaID("S7")!)
        try await store.setKnownSubject(room, "Topic")
        try await store.setKnownRoomName(room, "Name")
        try await store.setRoomAvatar(room, RoomAvatarRecord(sha1: "ab12", mxc: MXCURI(mxc: "mxc://localhost/a")!))

        let activation = try await store.activateRoom(room, at: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(!activation.firstActivation)
        #expect(activation.puppets == (try await store.puppets(room)))
        #expect(activation.puppets.count == 1)
        #expect(activation.ghosts == (try await store.roomGhosts(room)))
        #expect(activation.ghosts.count == 1)
        #expect(activation.undelivered == (try await store.undeliveredMappings(room)))
        #expect(activation.undelivered.map(\.eventID) == [EventID("$m1")])
        #expect(activation.lastStanzaID == StanzaID("S7"))
        #expect(activation.activeSince == (try await store.activeSince(room)))
        #expect(activation.texts == RoomTexts(subject: "Topic", name: "Name"))
        #expect(activation.avatar == RoomAvatarRecord(sha1: "ab12", mxc: MXCURI(mxc: "mxc://localhost/a")!))
    }
}
