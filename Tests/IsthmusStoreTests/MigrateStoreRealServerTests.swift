import Foundation
import IsthmusCommon
@testable import IsthmusStore
import TestSupport
import Testing

/// `migrate-store` into PostgreSQL: every table moves exactly (and back), tables larger than a batch arrive whole, a
/// failure part-way rolls back. Needs the test bed's PostgreSQL (`scripts/test`): skipped without it
/// (``needsTestBedPostgres``).
@Suite(.needsTestBedPostgres) struct MigrateStoreRealServerTests {
    let fixture = StoreCopyFixture()
    var room: RoomID { fixture.room }
    var alice: UserID { fixture.alice }
    var ghost: UserID { fixture.ghost }
    func populatedSQLite() async throws -> (StoreFixture, Store) { try await fixture.populatedSQLite() }
    func answers(_ store: Store) async throws -> [String] { try await fixture.answers(store) }

    @Test
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
    @Test
    func tablesLargerThanABatchArriveWhole() async throws {
        let fixture = try await StoreBackend.sqlite.open(persistent: true)
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
                               "!room:localhost", "$q\(index)", SQLValue.blob([UInt8](repeating: UInt8(index % 256), count: 300)))
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

    /// A row the target refuses part-way (here a fraction in an integer column, which SQLite's type affinity lets
    /// through) fails the copy, names the table, and rolls back the tables copied before it.
    @Test
    func aFailurePartWayRollsTheTargetBack() async throws {
        let (source, store) = try await populatedSQLite()
        try await store.write { db in _ = try db.run("UPDATE puppets SET joined = 1.5") }
        let target = try await StoreBackend.postgres.open()
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
}
