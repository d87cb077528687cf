import Foundation
import IsthmusCommon
@testable import IsthmusStore
import TestSupport
import Testing

/// `isthmus migrate-store`'s copy (``StoreCopy``): a SQLite store with a row in every table moves to a new PostgreSQL
/// database exactly — every read gives the same answer, sequences continue past the copied rows — and back again;
/// a non-empty target, a missing source, an unreachable target and a newer schema are refused with clear errors.
@Suite struct MigrateStoreTests {
    static let postgres = StoreBackend.all.contains(.postgres)

    let room = RoomID("!room:localhost")!
    let dmRoom = RoomID("!dm:localhost")!
    let alice = UserID("@alice:localhost")!
    let ghost = UserID("@_xmpp_romeo:localhost")!
    let romeo = MessageSender.occupant(.occupantID(OccupantID("occ-romeo")!))
    let inviteRoom = RoomID("!invite:localhost")!
    /// Bytes no text encoding holds, to show blobs move byte for byte.
    let payload: [UInt8] = [0, 1, 0xFF, 0xFE, 0x5C, 0x78, 0x27, 0x00]

    /// A SQLite store with rows in every table ``StoreCopy`` copies. Some inbox rows are deleted, so the inbox's
    /// AUTOINCREMENT high-water mark is above its largest remaining `seq`.
    func populatedSQLite() async throws -> (StoreFixture, Store) {
        let fixture = try StoreBackend.sqlite.open(persistent: true)
        let store = fixture.store
        try await store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: RoomAlias("#room:localhost"), muc: JID("room@muc.localhost")!))
        try await store.updateRoomLinkStatus(room, status: .active, detail: nil)
        try await store.updateRoomLinkArchive(room, archive: true)
        try await store.insertRoomLink(RoomLink(matrixRoom: RoomID("!second:localhost")!, matrixAlias: nil,
                                                muc: JID("second@muc.localhost")!, syncName: true))
        #expect(try await store.recordGhost(ghost, identity: "romeo@example.org", globalName: "Romeo"))
        try await store.saveRoomGhost(RoomGhost(room: room, user: ghost, nick: "romeo", occupantID: OccupantID("occ-romeo"),
                                                realJID: JID("romeo@example.org"), joined: true))
        try await store.savePuppet(Puppet(room: room, user: alice, occupant: JID("room@muc.localhost/Alice")!, nick: "Alice",
                                          displayname: "Alice A.", joined: true))
        // Message map: a delivered XMPP → Matrix row with a reaction, and a Matrix → XMPP row still being sent.
        try await store.recordBridgedFromXMPP(
            MessageMapping(room: room, eventID: EventID("$x1"), stanzaID: StanzaID("S1"), originID: OriginID("o-x1"),
                           direction: .xmppToMatrix, sender: romeo, state: .delivered, xmppID: MessageIDAttribute("x1"),
                           nick: "romeo", excerpt: "hello ünïcode ✓"),
            reactions: ReactionChange(added: [Reaction(room: room, target: EventID("$x1")!, reactor: romeo, key: "👍",
                                                       eventID: EventID("$r1"))]))
        #expect(try await store.insertMapping(MessageMapping(
            room: room, eventID: EventID("$m1"), stanzaID: nil, originID: OriginID("o-m1"), direction: .matrixToXMPP,
            sender: .matrix(alice), state: .sending, body: "pending *body*", kind: .message, xmppID: MessageIDAttribute("o-m1"),
            nick: "Alice", excerpt: "pending", payload: "<body>pending</body>")))
        try await store.setLastStanzaID(room, StanzaID("S1")!)
        _ = try await store.recordFirstActivation(room, at: Date(timeIntervalSince1970: 1_700_000_000.125))
        try await store.setKnownSubject(room, "Subject")
        try await store.setKnownRoomName(room, "Name")
        try await store.setRoomAvatar(room, RoomAvatarRecord(sha1: "aa11", mxc: "mxc://localhost/room"))
        // Inbox: three queued in a processed transaction, then the first handled (deleted).
        let queued = try await store.enqueueInbox([(room, EventID("$q1")!, payload), (room, EventID("$q2")!, payload + [1]),
                                                   (dmRoom, EventID("$q3")!, Array("{\"a\":1}".utf8))],
                                                  markingProcessed: TransactionID("txn-1")!)
        try await store.deleteInbox(seq: queued[0].seq)
        try await store.markTransactionProcessed(TransactionID("txn-2")!)
        try await store.recordInvitation(InvitedRoom(room: inviteRoom, invitedBy: alice, leaveAfter: Date(timeIntervalSince1970: 1_700_000_123.5)))
        try await store.saveDirectChat(DirectChat(linkedRoom: room, identity: "romeo@example.org", matrixUser: alice,
                                                  muc: JID("room@muc.localhost")!, ghost: ghost, matrixRoom: dmRoom))
        try await store.consumeDirectEvent(seq: queued[2].seq, eventID: EventID("$dm-handled")!, room: dmRoom)
        _ = try await store.secret(named: "media")
        try await store.recordXMPPAvatar(sha1: "bb22", mxc: "mxc://localhost/ghost")
        try await store.recordMatrixAvatar(mxc: "mxc://localhost/alice", StoredAvatar(sha1: "cc33", mediaType: "image/png", data: payload))
        return (fixture, store)
    }

    /// Every read API the bridge uses, as one comparable value.
    func answers(_ store: Store) async throws -> [String] {
        var answers: [String] = []
        func note(_ value: Any) { answers.append(String(describing: value)) }
        note(try await store.roomLinks())
        note(try await store.linkedRooms(among: [room, dmRoom]).map(\.rawValue).sorted())
        note(try await store.linkChangeVersion())
        note(try await store.ghostIdentity(ghost) as Any)
        note(try await store.isKnownGhost(ghost))
        note(try await store.roomGhosts(room))
        note(try await store.puppets(room))
        note(try await store.mapping(room: room, stanzaID: StanzaID("S1")!) as Any)
        note(try await store.mapping(room: room, eventID: EventID("$m1")!) as Any)
        note(try await store.mapping(room: room, originID: OriginID("o-m1")!) as Any)
        note(try await store.mapping(room: room, sender: romeo, xmppID: MessageIDAttribute("x1")!) as Any)
        note(try await store.undeliveredMappings(room))
        note(try await store.reactions(room: room, target: EventID("$x1")!, reactor: romeo))
        note(try await store.reaction(room: room, eventID: EventID("$r1")!) as Any)
        note(try await store.inbox(room))
        note(try await store.inbox(dmRoom))
        note(try await store.seenMatrixEvents(room, among: [EventID("$q1")!, EventID("$q2")!, EventID("$m1")!]).sorted { $0.rawValue < $1.rawValue })
        note(try await store.isTransactionProcessed(TransactionID("txn-1")!))
        note(try await store.isTransactionProcessed(TransactionID("txn-2")!))
        note(try await store.expiredInvitations(at: Date(timeIntervalSince1970: 1_800_000_000)))
        note(try await store.directChat(linkedRoom: room, ghost: ghost, user: alice) as Any)
        note(try await store.directChat(in: dmRoom) as Any)
        note(try await store.directRooms(of: room))
        note(try await store.secret(named: "media"))
        note(try await store.xmppAvatarMXC(sha1: "bb22") as Any)
        note(try await store.matrixAvatar(mxc: "mxc://localhost/alice") as Any)
        note(try await store.roomAvatar(room) as Any)
        note(try await store.roomTexts(room))
        note(try await store.lastStanzaID(room) as Any)
        note(try await store.activeSince(room) as Any)
        let counts = try await store.counts()
        note(counts.linksByStatus.sorted { $0.key < $1.key })
        note([counts.ghosts, counts.puppets, counts.inbox])
        return answers
    }

    @Test(.enabled(if: Self.postgres, "needs the test bed's PostgreSQL (scripts/test)"))
    func everyTableMovesToPostgresExactlyAndBack() async throws {
        let (source, store) = try await populatedSQLite()
        let before = try await answers(store)
        let target = try PostgresTestDatabase()
        let targetLocation = DatabaseLocation.postgres(url: try #require(PostgresURL(target.url)), poolSize: 1)

        var progressed: [String] = []
        let report = try StoreCopy.run(from: source.location, to: targetLocation) { progressed.append($0.name) }
        // Every table the copy knows had rows, so each one was really exercised.
        #expect(report.tables.map(\.name) == StoreCopyTable.all.map(\.name))
        #expect(progressed == StoreCopyTable.all.map(\.name))
        for table in report.tables { #expect(table.rows > 0, "\(table.name) had no rows in the fixture") }
        // Three queued, one handled, one consumed as a DM event: one left, below the AUTOINCREMENT high-water mark.
        #expect(report.tables.first { $0.name == "matrix_inbox" }?.rows == 1)
        #expect(report.schemaVersion == Migrations.all.map(\.version).max())

        let moved = try Store(location: targetLocation, logger: .disabled)
        #expect(try await answers(moved) == before)

        // Sequences continue past the source's high-water marks (the inbox's includes the deleted first row).
        let sourceHighWater = try await store.read { db in
            try db.query("SELECT seq FROM sqlite_sequence WHERE name = 'matrix_inbox'") { $0.int(0) ?? 0 }.first ?? 0
        }
        let next = try await moved.enqueueInbox([(room, EventID("$after")!, [7])])
        #expect(next.map(\.seq) == [Int64(sourceHighWater + 1)])
        #expect(try await moved.insertMapping(MessageMapping(
            room: room, eventID: EventID("$m2"), stanzaID: nil, originID: OriginID("o-m2"), direction: .matrixToXMPP,
            sender: .matrix(alice), state: .sending, body: "new")))
        let seqs = try await moved.undeliveredMappings(room).map(\.seq)
        #expect(seqs.count == 2 && seqs[1] > seqs[0])
        try await moved.insertRoomLink(RoomLink(matrixRoom: RoomID("!third:localhost")!, matrixAlias: nil, muc: JID("third@muc.localhost")!))
        #expect(try await moved.roomLinks().map(\.matrixRoom.rawValue) == ["!room:localhost", "!second:localhost", "!third:localhost"])

        // And back to a new SQLite file: the same rows as the source (the three rows added since aside).
        try await moved.deleteInbox(seq: next[0].seq)
        try await moved.write { db in
            _ = try db.run("DELETE FROM message_map WHERE origin_id = 'o-m2'")
            _ = try db.run("DELETE FROM room_links WHERE matrix_room = '!third:localhost'")
            _ = try db.run("UPDATE room_link_version SET version = version - 1")
        }
        let directory = try TemporaryDirectory()
        let roundTrip = try StoreCopy.run(from: targetLocation, to: .sqlite(path: directory.path("back.sqlite")))
        #expect(roundTrip.tables == report.tables)
        let back = try Store(location: .sqlite(path: directory.path("back.sqlite")), logger: .disabled)
        #expect(try await answers(back) == before)
        // The inbox's AUTOINCREMENT mark came back too: the next queued event is not given a number used before.
        let again = try await back.enqueueInbox([(room, EventID("$again")!, [8])])
        #expect(again[0].seq > next[0].seq)
    }

    /// Tables larger than a batch are read page after page — on a one-column key (message_map), a four-column one
    /// (reactions) and with the inbox's smaller batches — and arrive whole, in as many rows as were read.
    @Test(.enabled(if: Self.postgres, "needs the test bed's PostgreSQL (scripts/test)"))
    func tablesLargerThanABatchArriveWhole() async throws {
        let fixture = try StoreBackend.sqlite.open(persistent: true)
        try await fixture.store.write { db in
            for index in 0..<2_345 {
                _ = try db.run("""
                    INSERT INTO message_map (matrix_room, event_id, stanza_id, direction, sender, state, body)
                    VALUES (?, ?, ?, 'x2m', 'nick:romeo', 'delivered', ?)
                    """, "!room\(index % 7):localhost", "$e\(index)", "S\(index)", "body \(index)")
            }
            for index in 0..<1_111 {
                // Few distinct values in the leading key columns, so pages split inside them.
                _ = try db.run("INSERT INTO reactions (matrix_room, target_event, reactor, reaction_key, event_id) VALUES (?, ?, ?, ?, ?)",
                               "!room\(index % 2):localhost", "$t\(index % 3)", "@u\(index % 5):localhost", "k\(index)", "$r\(index)")
            }
            for index in 0..<450 {
                _ = try db.run("INSERT INTO matrix_inbox (matrix_room, event_id, payload) VALUES (?, ?, ?)",
                               "!room:localhost", "$q\(index)", SQLiteValue.blob([UInt8](repeating: UInt8(index % 256), count: 300)))
            }
        }
        let target = try PostgresTestDatabase()
        let location = DatabaseLocation.postgres(url: try #require(PostgresURL(target.url)), poolSize: 1)
        let report = try StoreCopy.run(from: fixture.location, to: location)
        let rows = Dictionary(uniqueKeysWithValues: report.tables.map { ($0.name, $0.rows) })
        #expect(rows["message_map"] == 2_345)
        #expect(rows["reactions"] == 1_111)
        #expect(rows["matrix_inbox"] == 450)
        let moved = try Store(location: location, logger: .disabled)
        #expect(try await moved.inbox(RoomID("!room:localhost")!).count == 450)
    }

    /// A target with bridge rows is refused before anything is written: its rows stay as they were.
    @Test(arguments: StoreBackend.all) func aNonEmptyTargetIsRefusedAndLeftUntouched(_ backend: StoreBackend) async throws {
        let (source, _) = try await populatedSQLite()
        let target = try backend.open(persistent: true)
        #expect(try await target.store.recordGhost(UserID("@_xmpp_other:localhost")!, identity: "other@example.org", globalName: "Other"))
        let error = #expect(throws: StoreCopyError.self) { try StoreCopy.run(from: source.location, to: target.location) }
        #expect(error == .targetNotEmpty(["ghosts": 1]))
        #expect(error?.description.contains("ghosts: 1 rows") == true)
        #expect(try await target.store.roomLinks().isEmpty)
        #expect(try await target.store.counts().ghosts == 1)
        #expect(try await target.store.ghostIdentity(ghost) == nil)
    }

    /// A dry run checks both and counts the source's rows, and writes nothing: a real copy into the same target
    /// works afterwards.
    @Test(arguments: StoreBackend.all) func aDryRunCountsAndWritesNothing(_ backend: StoreBackend) async throws {
        let (source, _) = try await populatedSQLite()
        let target = try backend.open(persistent: true)
        let dry = try StoreCopy.run(from: source.location, to: target.location, dryRun: true)
        #expect(dry.dryRun && dry.tables.allSatisfy { $0.checksum == nil })
        #expect(dry.tables.first { $0.name == "room_links" }?.rows == 2)
        #expect(try await target.store.roomLinks().isEmpty)
        let real = try StoreCopy.run(from: source.location, to: target.location)
        #expect(real.tables.map(\.rows) == dry.tables.map(\.rows))
        #expect(try await target.store.roomLinks().count == 2)
    }

    /// A row the target refuses part-way (here a fraction in an integer column, which SQLite's type affinity lets
    /// through) fails the copy, names the table, and rolls back the tables copied before it.
    @Test(.enabled(if: Self.postgres, "needs the test bed's PostgreSQL (scripts/test)"))
    func aFailurePartWayRollsTheTargetBack() async throws {
        let (source, store) = try await populatedSQLite()
        try await store.write { db in _ = try db.run("UPDATE puppets SET joined = 1.5") }
        let target = try StoreBackend.postgres.open()
        let error = #expect(throws: StoreCopyError.self) { try StoreCopy.run(from: source.location, to: target.location) }
        guard case .copyFailed(let table, _) = error else {
            Issue.record("expected copyFailed, got \(String(describing: error))")
            return
        }
        #expect(table == "puppets")
        #expect(try await target.store.roomLinks().isEmpty)
        #expect(try await target.store.counts().ghosts == 0)
        #expect(try await target.store.linkChangeVersion() == 0)
    }

    @Test func aMissingSourceFileIsAClearErrorAndIsNotCreated() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("missing.sqlite")
        let error = #expect(throws: StoreCopyError.self) {
            try StoreCopy.run(from: .sqlite(path: path), to: .sqlite(path: directory.path("target.sqlite")))
        }
        #expect(error == .sourceMissing(path: path))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// An unreachable PostgreSQL target names the target, redacted: the password never appears.
    @Test func anUnreachableTargetIsAClearErrorWithoutThePassword() async throws {
        let (source, _) = try await populatedSQLite()
        let url = try #require(PostgresURL("postgresql://isthmus:s3cret-pw@127.0.0.1:1/isthmus?connect_timeout=2"))
        let error = #expect(throws: StoreCopyError.self) { try StoreCopy.run(from: source.location, to: .postgres(url: url)) }
        guard case .cannotOpen(.target, let location, _) = error else {
            Issue.record("expected cannotOpen(.target), got \(String(describing: error))")
            return
        }
        #expect(location == "postgresql://isthmus:***@127.0.0.1:1/isthmus?connect_timeout=2")
        #expect(error?.description.contains("s3cret") == false)
    }

    /// A source a newer Isthmus migrated (a migration this binary does not know) is refused before the target is touched.
    @Test func aSourceFromANewerVersionIsRefused() async throws {
        let (source, store) = try await populatedSQLite()
        try await store.write { db in _ = try db.run("INSERT INTO schema_migrations (version, name) VALUES (999, 'future')") }
        let directory = try TemporaryDirectory()
        let error = #expect(throws: StoreCopyError.self) {
            try StoreCopy.run(from: source.location, to: .sqlite(path: directory.path("target.sqlite")))
        }
        guard case .cannotOpen(.source, _, let reason) = error else {
            Issue.record("expected cannotOpen(.source), got \(String(describing: error))")
            return
        }
        #expect(reason.contains("999"))
    }

    /// The two databases' migrations must agree, and a table the copy does not know stops it (so a new table cannot
    /// be left behind silently).
    @Test func differentMigrationsAndUnknownTablesAreRefused() async throws {
        let (source, store) = try await populatedSQLite()
        let directory = try TemporaryDirectory()
        let target = Database(.sqlite(try SQLiteConnection(path: directory.path("target.sqlite"))))
        _ = try Migrations.apply(Migrations.all, to: target)
        try target.run("DELETE FROM schema_migrations WHERE version = 12")
        let sourceDB = try StoreCopy.open(source.location, as: .source, logger: .disabled)
        #expect(throws: StoreCopyError.schemaMismatch(source: Migrations.all.map(\.version).sorted(),
                                                      target: Migrations.all.map(\.version).sorted().filter { $0 != 12 })) {
            _ = try StoreCopyPlan(source: sourceDB, target: target)
        }
        try await store.write { db in try db.execute("CREATE TABLE someone_elses (x INTEGER)") }
        let error = #expect(throws: StoreCopyError.self) {
            try StoreCopy.run(from: source.location, to: .sqlite(path: directory.path("other.sqlite")))
        }
        #expect(error == .unknownTable(.source, name: "someone_elses"))
    }

    /// The checksum does not depend on the order rows are read in, and tells rows apart.
    @Test func theRowHashTellsValuesApart() {
        let rows: [[SQLiteValue]] = [[.integer(1), .text("a")], [.integer(2), .null], [.real(1), .blob([0x61])]]
        let hashes = rows.map(StoreCopyPlan.hash)
        #expect(Set(hashes).count == 3)
        #expect(StoreCopyPlan.hash([.text("ab"), .text("c")]) != StoreCopyPlan.hash([.text("a"), .text("bc")]))
        #expect(StoreCopyPlan.hash([.text("a")]) == StoreCopyPlan.hash([.blob([0x61])]))
    }
}
