import IsthmusCommon
import IsthmusStore
import TestSupport
import Testing

@Suite struct MatrixInboxTableTests {
    let room = RoomID("!room:localhost")!

    func event(_ name: String) -> (room: RoomID, eventID: EventID, payload: [UInt8]) {
        (room, EventID("$\(name)")!, Array(name.utf8))
    }

    func mapping(_ name: String) -> MessageMapping {
        MessageMapping(room: room, eventID: EventID("$\(name)")!, stanzaID: nil, originID: OriginID("origin-\(name)")!,
                       direction: .matrixToXMPP, sender: .matrix(UserID("@alice:localhost")!), state: .sending, body: name)
    }

    @Test(arguments: StoreBackend.all) func anEventIsQueuedOnceInOrder(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        let added = try await store.enqueueInbox([event("a"), event("b")])
        let again = try await store.enqueueInbox([event("b"), event("c"), event("d"), event("d")])
        #expect(added.map(\.eventID.rawValue) == ["$a", "$b"])
        #expect(again.map(\.eventID.rawValue) == ["$c", "$d"], "an id twice in one call is queued and returned once")
        #expect(try await store.inbox(room).map(\.payload) == [Array("a".utf8), Array("b".utf8), Array("c".utf8), Array("d".utf8)])
    }

    /// A big transaction's events go in a few multi-row statements (64, 32, … rows), in order, each event once.
    @Test(arguments: StoreBackend.all) func aHundredEventsTakeAFewStatementsInOrder(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        _ = try await store.enqueueInbox([event("e7"), event("e50"), event("e99")])
        let events = (0..<100).map { event("e\($0)") }
        let before = store.activity.snapshot()
        let added = try await store.enqueueInbox(events + [event("e3")])
        let statements = store.activity.snapshot().statements - before.statements
        let expected = (0..<100).filter { ![7, 50, 99].contains($0) }.map { "$e\($0)" }
        #expect(added.map(\.eventID.rawValue) == expected)
        #expect(added.map(\.seq) == added.map(\.seq).sorted() && Set(added.map(\.seq)).count == added.count)
        #expect(statements <= 4, "101 rows: 64 + 32 + 4 + 1")
        #expect(try await store.inbox(room).map(\.eventID.rawValue) == ["$e7", "$e50", "$e99"] + expected)
    }

    @Test(arguments: StoreBackend.all) func aMessagesMappingConsumesItsInboxEntryInTheSameWrite(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        let queued = try await store.enqueueInbox([event("a"), event("b")])
        let statements = store.activity.snapshot().statements
        #expect(try await store.insertMapping(mapping("a"), consumingInbox: queued[0].seq))
        // PostgreSQL: one statement (the delete in its `WITH`), one round trip.
        #expect(store.activity.snapshot().statements - statements == (backend == .postgres ? 1 : 2))
        #expect(try await store.inbox(room).map(\.eventID.rawValue) == ["$b"])
        // A repeat (the homeserver's late copy) is not mapped twice, and its entry goes too.
        let late = try await store.enqueueInbox([event("a")])
        #expect(try await store.insertMapping(mapping("a"), consumingInbox: late[0].seq) == false)
        #expect(try await store.inbox(room).map(\.eventID.rawValue) == ["$b"])
        #expect(try await store.undeliveredMappings(room).map(\.body) == ["a"])
    }

    /// Issue 26: a run's map rows in one commit, each consuming its entry; one mapped already is not mapped again.
    @Test(arguments: StoreBackend.all) func aRunOfMappingsIsOneCommitAndConsumesEveryEntry(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        _ = try await store.insertMapping(mapping("b"))
        let queued = try await store.enqueueInbox([event("a"), event("b"), event("c"), event("d")])
        let commits = store.activity.snapshot().commits
        let inserted = try await store.insertMappings(queued.prefix(3).map { (mapping: mapping(String($0.eventID.rawValue.dropFirst())), seq: $0.seq) })
        #expect(inserted == [true, false, true])
        #expect(store.activity.snapshot().commits - commits == 1)
        #expect(try await store.inbox(room).map(\.eventID.rawValue) == ["$d"])
        #expect(try await store.undeliveredMappings(room).map(\.body) == ["b", "a", "c"])
    }

    /// Issue 26: on PostgreSQL a run's rows are one statement per chunk (64, 4 and 2 rows here), not one per row; on
    /// SQLite, with no round trip to save, each row is still its insert and its inbox delete.
    @Test(arguments: StoreBackend.all) func aLongRunIsOneStatementPerChunkOnPostgreSQL(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        let names = (0..<70).map { "m\($0)" }
        let queued = try await store.enqueueInbox(names.map(event))
        _ = try await store.insertMapping(mapping("m5"))
        let statements = store.activity.snapshot().statements
        let inserted = try await store.insertMappings(queued.map { (mapping: mapping(String($0.eventID.rawValue.dropFirst())), seq: $0.seq) })
        #expect(inserted == names.map { $0 != "m5" })
        #expect(store.activity.snapshot().statements - statements == (backend == .postgres ? 3 : 140))
        #expect(try await store.inbox(room).isEmpty)
        #expect(try await store.undeliveredMappings(room).map(\.body) == ["m5"] + names.filter { $0 != "m5" })
    }

    @Test(arguments: StoreBackend.all) func seenEventsAreTheQueuedAndTheMappedOnes(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        _ = try await store.enqueueInbox([event("queued")])
        _ = try await store.insertMapping(mapping("mapped"))
        let ids = ["$queued", "$mapped", "$never"].map { EventID($0)! }
        #expect(try await store.seenMatrixEvents(room, among: ids) == [EventID("$queued")!, EventID("$mapped")!])
        #expect(try await store.seenMatrixEvents(RoomID("!other:localhost")!, among: ids) == [EventID("$queued")!])
    }

    /// What a timeline check reads before the timeline: a row queued after it has a higher number, even once the
    /// highest row before it was handled and deleted.
    @Test(arguments: StoreBackend.all) func theLastInboxSeqIsBelowEveryRowQueuedAfterIt(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        #expect(try await store.lastInboxSeq() == 0)
        let queued = try await store.enqueueInbox([event("a"), event("b")])
        let mark = try await store.lastInboxSeq()
        #expect(mark == queued[1].seq)
        try await store.deleteInbox(seq: queued[1].seq)
        let later = try await store.enqueueInbox([event("c")])
        #expect(later[0].seq > mark)
    }

    /// What a DM's new event checks: whether an older one of the same room still waits (another room's does not count).
    @Test(arguments: StoreBackend.all) func anOlderRowOfTheSameRoomIsSeenAndNoOtherRoomsRow(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        let other = RoomID("!other:localhost")!
        let queued = try await store.enqueueInbox([(other, EventID("$o")!, [1]), event("a"), event("b")])
        #expect(try await !store.hasInbox(room, before: queued[1].seq))
        #expect(try await store.hasInbox(room, before: queued[2].seq))
        try await store.deleteInbox(seq: queued[1].seq)
        #expect(try await !store.hasInbox(room, before: queued[2].seq))
    }
}
