import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import TestSupport
import Testing

@Suite struct RoomLinkTableTests {
    let first = RoomLink(matrixRoom: RoomID("!first:localhost")!, matrixAlias: RoomAlias("#first:localhost"),
                         muc: JID("first@muc.localhost")!)
    let second = RoomLink(matrixRoom: RoomID("!second:localhost")!, matrixAlias: nil, muc: JID("second@muc.localhost")!)

    func storeWithTwoLinks(_ backend: StoreBackend) async throws -> StoreFixture {
        let fixture = try await backend.open()
        try await fixture.store.insertRoomLink(first)
        try await fixture.store.insertRoomLink(second)
        return fixture
    }

    @Test(arguments: StoreBackend.all) func insertsAndListsOldestFirst(_ backend: StoreBackend) async throws {
        let fixture = try await storeWithTwoLinks(backend)
        let store = fixture.store
        let links = try await store.roomLinks()
        #expect(links == [first, second])
        #expect(links.first?.status == .pending)
        #expect(links.first?.matrixAlias == RoomAlias("#first:localhost"))
        #expect(links.last?.matrixAlias == nil)
        #expect(links.allSatisfy { !$0.unlinking && $0.detail == nil })
    }

    @Test(arguments: StoreBackend.all) func recordsWhetherTheMUCKeepsAnArchive(_ backend: StoreBackend) async throws {
        let fixture = try await storeWithTwoLinks(backend)
        let store = fixture.store
        #expect(try await store.roomLinks().map(\.archive) == [nil, nil])
        try await store.updateRoomLinkArchive(first.matrixRoom, archive: false)
        try await store.updateRoomLinkArchive(second.matrixRoom, archive: true)
        #expect(try await store.roomLinks().map(\.archive) == [false, true])
    }

    @Test(arguments: StoreBackend.all) func keepsTheMatrixModeratorsOptIn(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        var opted = second
        opted.matrixModeratorsToMUC = true
        try await store.insertRoomLink(first)
        try await store.insertRoomLink(opted)
        #expect(try await store.roomLinks().map(\.matrixModeratorsToMUC) == [false, true])
    }

    @Test(arguments: StoreBackend.all) func storesTheBareMUCJID(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        try await store.insertRoomLink(RoomLink(matrixRoom: RoomID("!r:localhost")!, matrixAlias: nil,
                                                muc: JID("Room@MUC.localhost/SomeNick")!))
        #expect(try await store.roomLinks().map(\.muc) == [JID("room@muc.localhost")!])
    }

    @Test(arguments: StoreBackend.all) func refusesASecondLinkForTheSameMatrixRoom(_ backend: StoreBackend) async throws {
        let fixture = try await storeWithTwoLinks(backend)
        let store = fixture.store
        let clash = RoomLink(matrixRoom: first.matrixRoom, matrixAlias: nil, muc: JID("other@muc.localhost")!)
        await #expect(throws: RoomLinkConflict.matrixRoomAlreadyLinked(first)) { try await store.insertRoomLink(clash) }
        #expect(try await store.roomLinks() == [first, second])
    }

    @Test(arguments: StoreBackend.all) func refusesASecondLinkForTheSameMUC(_ backend: StoreBackend) async throws {
        let fixture = try await storeWithTwoLinks(backend)
        let store = fixture.store
        // Same room, differently cased and with a resource.
        let clash = RoomLink(matrixRoom: RoomID("!other:localhost")!, matrixAlias: nil, muc: JID("Second@muc.localhost/nick")!)
        await #expect(throws: RoomLinkConflict.mucAlreadyLinked(second)) { try await store.insertRoomLink(clash) }
        #expect(try await store.roomLinks() == [first, second])
    }

    @Test(arguments: StoreBackend.all) func reportsTheMatrixSideFirstWhenBothSidesClash(_ backend: StoreBackend) async throws {
        let fixture = try await storeWithTwoLinks(backend)
        let store = fixture.store
        let clash = RoomLink(matrixRoom: first.matrixRoom, matrixAlias: nil, muc: second.muc)
        await #expect(throws: RoomLinkConflict.matrixRoomAlreadyLinked(first)) { try await store.insertRoomLink(clash) }
    }

    @Test(arguments: StoreBackend.all) func marksUnlinkingByMatrixRoom(_ backend: StoreBackend) async throws {
        let fixture = try await storeWithTwoLinks(backend)
        let store = fixture.store
        let marked = try await store.markUnlinking(matrixRoom: first.matrixRoom)
        #expect(marked?.matrixRoom == first.matrixRoom)
        #expect(marked?.unlinking == true)
        #expect(try await store.roomLinks().map(\.unlinking) == [true, false])
    }

    @Test(arguments: StoreBackend.all) func marksUnlinkingByMUC(_ backend: StoreBackend) async throws {
        let fixture = try await storeWithTwoLinks(backend)
        let store = fixture.store
        let marked = try await store.markUnlinking(muc: JID("SECOND@muc.localhost/nick")!)
        #expect(marked?.matrixRoom == second.matrixRoom)
        #expect(marked?.unlinking == true)
        #expect(try await store.roomLinks().map(\.unlinking) == [false, true])
    }

    @Test(arguments: StoreBackend.all) func linkedRoomsAreFoundAmongManyInChunksLeavingOutUnlinkingAndUnknown(
        _ backend: StoreBackend
    ) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        // 70 links (more than one statement's 64), every tenth being unlinked, asked about with 30 rooms never linked.
        let links = (0..<70).map { RoomLink(matrixRoom: RoomID("!r\($0):localhost")!, matrixAlias: nil, muc: JID("r\($0)@muc.localhost")!) }
        for link in links { try await store.insertRoomLink(link) }
        for link in links.enumerated() where link.offset % 10 == 0 { _ = try await store.markUnlinking(matrixRoom: link.element.matrixRoom) }
        let unknown = (0..<30).map { RoomID("!unknown\($0):localhost")! }
        let expected = Set(links.enumerated().filter { $0.offset % 10 != 0 }.map(\.element.matrixRoom))
        #expect(try await store.linkedRooms(among: Set(links.map(\.matrixRoom) + unknown)) == expected)
        #expect(try await store.linkedRooms(among: []) == [])
        #expect(try await store.linkedRooms(among: [links[1].matrixRoom]) == [links[1].matrixRoom])
    }

    @Test(arguments: StoreBackend.all) func markingAnUnknownLinkReturnsNil(_ backend: StoreBackend) async throws {
        let fixture = try await storeWithTwoLinks(backend)
        let store = fixture.store
        #expect(try await store.markUnlinking(matrixRoom: RoomID("!unknown:localhost")!) == nil)
        #expect(try await store.markUnlinking(muc: JID("unknown@muc.localhost")!) == nil)
        #expect(try await store.markUnlinking() == nil)
        #expect(try await store.roomLinks().allSatisfy { !$0.unlinking })
    }

    @Test(arguments: StoreBackend.all) func updatesStatusAndDetail(_ backend: StoreBackend) async throws {
        let fixture = try await storeWithTwoLinks(backend)
        let store = fixture.store
        try await store.updateRoomLinkStatus(second.matrixRoom, status: .error, detail: "MUC refused the join")
        try await store.updateRoomLinkStatus(first.matrixRoom, status: .active, detail: nil)
        try await store.updateRoomLinkStatus(RoomID("!unknown:localhost")!, status: .active, detail: nil)
        let links = try await store.roomLinks()
        #expect(links.map(\.status) == [.active, .error])
        #expect(links.map(\.detail) == [nil, "MUC refused the join"])
        try await store.updateRoomLinkStatus(second.matrixRoom, status: .active, detail: nil)
        #expect(try await store.roomLinks().last?.detail == nil)
    }

    @Test(arguments: StoreBackend.all) func deletesALinkAndFreesBothSides(_ backend: StoreBackend) async throws {
        let fixture = try await storeWithTwoLinks(backend)
        let store = fixture.store
        try await store.deleteRoomLink(first.matrixRoom)
        #expect(try await store.roomLinks() == [second])
        try await store.insertRoomLink(first)
        #expect(try await store.roomLinks() == [second, first])
    }

    @Test(arguments: StoreBackend.all) func linksSurviveAReopen(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        do {
            let store = fixture.store
            try await store.insertRoomLink(first)
            try await store.updateRoomLinkStatus(first.matrixRoom, status: .active, detail: "joined")
        }
        let reopened = try fixture.reopen()
        var expected = first
        expected.status = .active
        expected.detail = "joined"
        #expect(try await reopened.roomLinks() == [expected])
    }

    @Test(arguments: StoreBackend.all) func keepsTheKindAndTheIdleMark(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        var dynamic = second
        dynamic.kind = .dynamic
        try await store.insertRoomLink(first)
        try await store.insertRoomLink(dynamic)
        #expect(try await store.roomLinks().map(\.kind) == [.static, .dynamic])
        #expect(try await store.roomLink(dynamic.matrixRoom)?.kind == .dynamic)
        #expect(try await store.roomLink(RoomID("!none:localhost")!) == nil)
        let since = Date(timeIntervalSince1970: 1_700_000_000)
        try await store.setRoomLinkIdle(dynamic.matrixRoom, since: since)
        #expect(try await store.roomLinks().map(\.idleSince) == [nil, since])
        try await store.setRoomLinkIdle(dynamic.matrixRoom, since: nil)
        #expect(try await store.roomLinks().map(\.idleSince) == [nil, nil])
    }
}
