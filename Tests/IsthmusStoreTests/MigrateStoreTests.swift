import Foundation
import IsthmusCommon
@testable import IsthmusStore
import TestSupport
import Testing

/// `isthmus migrate-store`'s copy (``StoreCopy``) on whichever backends the run has: a non-empty target, a dry run, a
/// missing source, an unreachable target, a newer schema, other migrations and unknown tables. (Into PostgreSQL:
/// ``MigrateStoreRealServerTests``.)
@Suite struct MigrateStoreTests {
    let fixture = StoreCopyFixture()
    var room: RoomID { fixture.room }
    var alice: UserID { fixture.alice }
    var ghost: UserID { fixture.ghost }
    func populatedSQLite() async throws -> (StoreFixture, Store) { try await fixture.populatedSQLite() }
    func answers(_ store: Store) async throws -> [String] { try await fixture.answers(store) }

    /// A target with bridge rows is refused before anything is written: its rows stay as they were.
    @Test(arguments: StoreBackend.all) func aNonEmptyTargetIsRefusedAndLeftUntouched(_ backend: StoreBackend) async throws {
        let (source, _) = try await populatedSQLite()
        let target = try await backend.open(persistent: true)
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
        let target = try await backend.open(persistent: true)
        let dry = try StoreCopy.run(from: source.location, to: target.location, dryRun: true)
        #expect(dry.dryRun && dry.tables.allSatisfy { $0.checksum == nil })
        #expect(dry.tables.first { $0.name == "room_links" }?.rows == 2)
        #expect(try await target.store.roomLinks().isEmpty)
        let real = try StoreCopy.run(from: source.location, to: target.location)
        #expect(real.tables.map(\.rows) == dry.tables.map(\.rows))
        #expect(try await target.store.roomLinks().count == 2)
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
        let rows: [[SQLValue]] = [[.integer(1), .text("a")], [.integer(2), .null], [.real(1), .blob([0x61])]]
        let hashes = rows.map(StoreCopyPlan.hash)
        #expect(Set(hashes).count == 3)
        #expect(StoreCopyPlan.hash([.text("ab"), .text("c")]) != StoreCopyPlan.hash([.text("a"), .text("bc")]))
        #expect(StoreCopyPlan.hash([.text("a")]) == StoreCopyPlan.hash([.blob([0x61])]))
    }
}
