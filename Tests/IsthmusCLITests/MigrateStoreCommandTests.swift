import IsthmusCommon
import IsthmusStore
import TestSupport
import Testing

/// `migrate-store`'s failures other than usage: one line naming the database, exit 1, no password.
@Suite struct MigrateStoreCommandTests {
    @Test func aMissingSourceFileExits1WithOneLine() async throws {
        let directory = try TemporaryDirectory()
        let result = await isthmus("migrate-store", "--from", "sqlite:" + directory.path("none.sqlite"),
                                   "--to", "postgresql://isthmus:pw-secret@127.0.0.1:1/x")
        #expect(result.status == 1)
        #expect(result.output.errorLines == ["Error: the source database \(directory.path("none.sqlite")) does not exist"])
        #expect(result.stdout == "Copying sqlite:\(directory.path("none.sqlite")) to postgresql://isthmus:***@127.0.0.1:1/x\n")
        #expect(!result.stdout.contains("pw-secret") && !result.stderr.contains("pw-secret"))
    }

    /// SQLite to SQLite (what the command allows besides PostgreSQL): the table of counts and the next step.
    @Test func aCopyPrintsEachTableAndTheNextStep() async throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("source.sqlite")
        let store = try Store(path: source, logger: .disabled)
        try await store.insertRoomLink(RoomLink(matrixRoom: RoomID("!r:localhost")!, matrixAlias: nil, muc: JID("r@muc.localhost")!))
        let dry = await isthmus("migrate-store", "--dry-run", "--from", "sqlite:" + source, "--to", "sqlite:" + directory.path("t.sqlite"))
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.output.outputLines.contains { $0.split(separator: " ") == ["room_links", "1"] })
        #expect(dry.output.outputLines.last?.hasPrefix("Dry run: 2 rows in 28 tables would be copied;") == true)
        let result = await isthmus("migrate-store", "--from", "sqlite:" + source, "--to", "sqlite:" + directory.path("t.sqlite"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.output.outputLines.first == "Copying sqlite:\(source) to sqlite:\(directory.path("t.sqlite"))")
        #expect(result.output.outputLines.contains { $0.split(separator: " ").prefix(2) == ["room_links", "1"] })
        #expect(result.output.outputLines.suffix(2) == [
            "Copied 2 rows in 28 tables; the target's row counts and checksums match the source's.",
            "Next: point the config at the target (database.url, without database.path) and start isthmus serve.",
        ])
        let copied = try Store(path: directory.path("t.sqlite"), logger: .disabled)
        #expect(try await copied.roomLinks().map(\.muc.description) == ["r@muc.localhost"])
    }
}
