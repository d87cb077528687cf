import IsthmusCommon
@testable import IsthmusStore
import TestSupport
import Testing

/// What the store must do alike on both backends beyond the tables' own tests (PostgreSQL-only cases:
/// ``PostgresStoreRealServerTests``).
@Suite struct StoreBackendTests {
    let room = RoomID("!room:localhost")!
    let ghost = UserID("@_xmpp_romeo:localhost")!

    /// Another process's link write (the CLI beside `serve`) changes the version `serve` polls, and so do its own.
    @Test(arguments: StoreBackend.all) func linkWritesFromAnyProcessChangeTheLinkVersion(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        let serve = fixture.store
        let cli = try fixture.reopen()
        let before = try await serve.linkChangeVersion()
        try await cli.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: nil, muc: JID("room@muc.localhost")!))
        let afterInsert = try await serve.linkChangeVersion()
        #expect(afterInsert != before)
        _ = try await serve.markUnlinking(matrixRoom: room)
        let afterUnlink = try await cli.linkChangeVersion()
        #expect(afterUnlink != afterInsert)
        // Writes that are not link changes leave it alone.
        try await cli.markTransactionProcessed(TransactionID("t1")!)
        #expect(try await serve.linkChangeVersion() == afterUnlink)
        try await serve.deleteRoomLink(room)
        #expect(try await cli.linkChangeVersion() != afterUnlink)
    }

    /// A NUL character (which PostgreSQL's `text` cannot hold) in a value from the other side does not make the write
    /// fail: PostgreSQL keeps U+FFFD in its place; SQLite keeps the text up to it (`SQLiteConnection` binds text up to
    /// its first NUL, as a C string would — its behaviour before PostgreSQL came, unchanged here).
    /// On PostgreSQL each cleaned value is reported, at most once a minute (the first at once).
    @Test(arguments: StoreBackend.all) func aNULInTextIsStored(_ backend: StoreBackend) async throws {
        let sink = LogSink.memory()
        let fixture = try await backend.open(logger: Logger(label: "store", sink: sink))
        #expect(try await fixture.store.recordGhost(ghost, identity: "romeo\u{0}@example.org", globalName: "Ro\u{0}meo"))
        let identity = try await fixture.store.ghostIdentity(ghost)
        #expect(identity == (backend == .postgres ? "romeo\u{FFFD}@example.org" : "romeo"))
        let reports = sink.records.filter { $0.message.hasPrefix("Text with a NUL character") }
        #expect(reports.count == (backend == .postgres ? 1 : 0))
        #expect(reports.first.map { $0.metadata["store.values_cleaned"] == "1" } ?? true)
    }

    @Test func cleanedTextIsReportedAtOnceThenAtMostOnceAMinuteWithTheCount() {
        var log = HostileTextLog()
        let start = ContinuousClock.now
        #expect(log.note(at: start) == 1)
        #expect(log.note(at: start + .seconds(10)) == nil)
        #expect(log.note(at: start + .seconds(59)) == nil)
        #expect(log.note(at: start + .seconds(61)) == 3)
        #expect(log.note(at: start + .seconds(62)) == nil)
    }

    /// A PostgreSQL server that cannot be reached fails the open as ``StoreError/Kind/unavailable``, and the message
    /// never shows the URL's password.
    @Test func anUnreachablePostgresIsUnavailableAndItsPasswordUnsaid() throws {
        let url = try #require(PostgresURL("postgresql://isthmus:s3cret@127.0.0.1:1/isthmus?connect_timeout=2"))
        do {
            _ = try Store(location: .postgres(url: url), logger: .disabled)
            Issue.record("a store opened on a closed port")
        } catch let error as StoreError {
            #expect(error.kind == .unavailable, "\(error)")
            #expect(!error.description.contains("s3cret"))
        }
    }

    /// The disk-full probe writes and rolls back on either backend: true on a healthy store, and nothing is left behind.
    @Test(arguments: StoreBackend.all) func theWriteProbeSucceedsAndLeavesNothing(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        #expect(await fixture.store.probeWrite())
        #expect(await fixture.store.probeWrite())
        let probeTable: String = switch backend {
        case .sqlite: "SELECT COUNT(*) FROM sqlite_master WHERE name = 'isthmus_write_probe'"
        case .postgres: "SELECT COUNT(*) FROM pg_tables WHERE tablename = 'isthmus_write_probe'"
        }
        #expect(try await fixture.store.read { db in try db.query(probeTable) { $0.int(0) } } == [0])
    }

    /// `doctor`'s view: the backend, its version and the migrations, read without changing anything.
    @Test(arguments: StoreBackend.all) func aDiagnosisReadsTheMigrationsWithoutMigrating(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        let diagnosis = try Store.diagnose(fixture.location)
        #expect(diagnosis.backend == (backend == .postgres ? .postgresql : .sqlite))
        #expect(!diagnosis.serverVersion.isEmpty && diagnosis.serverVersion != "?")
        #expect(diagnosis.applied == Migrations.all.map(\.version))
        #expect(diagnosis.pending.isEmpty && diagnosis.unknown.isEmpty)
    }
}
