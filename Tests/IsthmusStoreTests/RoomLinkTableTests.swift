import IsthmusCommon
import IsthmusStore
import TestSupport
import Testing

@Suite struct RoomLinkTableTests {
    let first = RoomLink(matrixRoom: RoomID("!first:localhost")!, matrixAlias: RoomAlias("#first:localhost"),
                         muc: JID("first@muc.localhost")!)
    let second = RoomLink(matrixRoom: RoomID("!second:localhost")!, matrixAlias: nil, muc: JID("second@muc.localhost")!)

    func storeWithTwoLinks() async throws -> Store {
        let store = try Store(path: ":memory:", logger: .disabled)
        try await store.insertRoomLink(first)
        try await store.insertRoomLink(second)
        return store
    }

    @Test func insertsAndListsOldestFirst() async throws {
        let store = try await storeWithTwoLinks()
        let links = try await store.roomLinks()
        #expect(links == [first, second])
        #expect(links.first?.status == .pending)
        #expect(links.first?.matrixAlias == RoomAlias("#first:localhost"))
        #expect(links.last?.matrixAlias == nil)
        #expect(links.allSatisfy { !$0.unlinking && $0.detail == nil })
    }

    @Test func recordsWhetherTheMUCKeepsAnArchive() async throws {
        let store = try await storeWithTwoLinks()
        #expect(try await store.roomLinks().map(\.archive) == [nil, nil])
        try await store.updateRoomLinkArchive(first.matrixRoom, archive: false)
        try await store.updateRoomLinkArchive(second.matrixRoom, archive: true)
        #expect(try await store.roomLinks().map(\.archive) == [false, true])
    }

    @Test func keepsTheMatrixModeratorsOptIn() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        var opted = second
        opted.matrixModeratorsToMUC = true
        try await store.insertRoomLink(first)
        try await store.insertRoomLink(opted)
        #expect(try await store.roomLinks().map(\.matrixModeratorsToMUC) == [false, true])
    }

    @Test func storesTheBareMUCJID() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        try await store.insertRoomLink(RoomLink(matrixRoom: RoomID("!r:localhost")!, matrixAlias: nil,
                                                muc: JID("Room@MUC.localhost/SomeNick")!))
        #expect(try await store.roomLinks().map(\.muc) == [JID("room@muc.localhost")!])
    }

    @Test func refusesASecondLinkForTheSameMatrixRoom() async throws {
        let store = try await storeWithTwoLinks()
        let clash = RoomLink(matrixRoom: first.matrixRoom, matrixAlias: nil, muc: JID("other@muc.localhost")!)
        await #expect(throws: RoomLinkConflict.matrixRoomAlreadyLinked(first)) { try await store.insertRoomLink(clash) }
        #expect(try await store.roomLinks() == [first, second])
    }

    @Test func refusesASecondLinkForTheSameMUC() async throws {
        let store = try await storeWithTwoLinks()
        // Same room, differently cased and with a resource.
        let clash = RoomLink(matrixRoom: RoomID("!other:localhost")!, matrixAlias: nil, muc: JID("Second@muc.localhost/nick")!)
        await #expect(throws: RoomLinkConflict.mucAlreadyLinked(second)) { try await store.insertRoomLink(clash) }
        #expect(try await store.roomLinks() == [first, second])
    }

    @Test func reportsTheMatrixSideFirstWhenBothSidesClash() async throws {
        let store = try await storeWithTwoLinks()
        let clash = RoomLink(matrixRoom: first.matrixRoom, matrixAlias: nil, muc: second.muc)
        await #expect(throws: RoomLinkConflict.matrixRoomAlreadyLinked(first)) { try await store.insertRoomLink(clash) }
    }

    @Test func marksUnlinkingByMatrixRoom() async throws {
        let store = try await storeWithTwoLinks()
        let marked = try await store.markUnlinking(matrixRoom: first.matrixRoom)
        #expect(marked?.matrixRoom == first.matrixRoom)
        #expect(marked?.unlinking == true)
        #expect(try await store.roomLinks().map(\.unlinking) == [true, false])
    }

    @Test func marksUnlinkingByMUC() async throws {
        let store = try await storeWithTwoLinks()
        let marked = try await store.markUnlinking(muc: JID("SECOND@muc.localhost/nick")!)
        #expect(marked?.matrixRoom == second.matrixRoom)
        #expect(marked?.unlinking == true)
        #expect(try await store.roomLinks().map(\.unlinking) == [false, true])
    }

    @Test func markingAnUnknownLinkReturnsNil() async throws {
        let store = try await storeWithTwoLinks()
        #expect(try await store.markUnlinking(matrixRoom: RoomID("!unknown:localhost")!) == nil)
        #expect(try await store.markUnlinking(muc: JID("unknown@muc.localhost")!) == nil)
        #expect(try await store.markUnlinking() == nil)
        #expect(try await store.roomLinks().allSatisfy { !$0.unlinking })
    }

    @Test func updatesStatusAndDetail() async throws {
        let store = try await storeWithTwoLinks()
        try await store.updateRoomLinkStatus(second.matrixRoom, status: .error, detail: "MUC refused the join")
        try await store.updateRoomLinkStatus(first.matrixRoom, status: .active, detail: nil)
        try await store.updateRoomLinkStatus(RoomID("!unknown:localhost")!, status: .active, detail: nil)
        let links = try await store.roomLinks()
        #expect(links.map(\.status) == [.active, .error])
        #expect(links.map(\.detail) == [nil, "MUC refused the join"])
        try await store.updateRoomLinkStatus(second.matrixRoom, status: .active, detail: nil)
        #expect(try await store.roomLinks().last?.detail == nil)
    }

    @Test func deletesALinkAndFreesBothSides() async throws {
        let store = try await storeWithTwoLinks()
        try await store.deleteRoomLink(first.matrixRoom)
        #expect(try await store.roomLinks() == [second])
        try await store.insertRoomLink(first)
        #expect(try await store.roomLinks() == [second, first])
    }

    @Test func linksSurviveAReopen() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("isthmus.sqlite")
        do {
            let store = try Store(path: path, logger: .disabled)
            try await store.insertRoomLink(first)
            try await store.updateRoomLinkStatus(first.matrixRoom, status: .active, detail: "joined")
        }
        let reopened = try Store(path: path, logger: .disabled)
        var expected = first
        expected.status = .active
        expected.detail = "joined"
        #expect(try await reopened.roomLinks() == [expected])
    }
}
