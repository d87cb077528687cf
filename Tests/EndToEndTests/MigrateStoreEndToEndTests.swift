import Foundation
import TestSupport
import XCTest

/// `isthmus migrate-store` against the real servers (issue 17): a bridge running on SQLite is stopped, messages are
/// queued both ways while it is down, its store is copied to PostgreSQL, the config is switched to `database.url`,
/// and the bridge carries on from the copy — the queued messages arrive exactly once and new ones flow both ways.
final class MigrateStoreEndToEndTests: XCTestCase {
    func testTheBridgeCarriesOnFromAStoreMigratedToPostgres() async throws {
        let world = try EndToEndHarness("migrate-store")
        let database = try PostgresTestDatabase()
        // The scenario starts on SQLite whatever store the harness chose for the run.
        let original = try String(contentsOf: world.config, encoding: .utf8)
        let onSQLite = original.replacingOccurrences(of: #"database:\n  (path|url): [^\n]*\n"#,
                                                     with: "database:\n  path: isthmus.sqlite\n", options: .regularExpression)
        try onSQLite.write(to: world.config, atomically: true, encoding: .utf8)
        try await world.startBridge()
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("migrate")
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        try romeo.sendGroupchat(to: muc, body: "before, from xmpp")
        _ = try await world.matrixMessages(alice, in: room, untilBody: "before, from xmpp", excluding: alice.userID)
        try await alice.send("before, from matrix", to: room)
        _ = try await world.xmppMessages(romeo, from: muc, untilBody: "before, from matrix", excludingNick: "Romeo")

        let sqlite = "sqlite:" + world.directory.appendingPathComponent("isthmus.sqlite").path
        // While serve runs, its SQLite file is refused and nothing is copied.
        let refused = try world.cli("migrate-store", "--from", sqlite, "--to", database.url)
        XCTAssertEqual(refused.status, 1, refused.stdout)
        XCTAssertTrue(refused.stderr.contains("is open in another process"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("stop isthmus serve first"), refused.stderr)

        world.stopBridge()
        for index in 0..<3 { try romeo.sendGroupchat(to: muc, body: "xmpp while down \(index)") }
        for index in 0..<3 { try await alice.send("matrix while down \(index)", to: room) }

        let dry = try world.cli("migrate-store", "--dry-run", "--from", sqlite, "--to", database.url)
        XCTAssertEqual(dry.status, 0, dry.stderr)
        XCTAssertTrue(dry.stdout.contains("No rows were written."), dry.stdout)
        let copied = try world.cli("migrate-store", "--from", sqlite, "--to", database.url)
        XCTAssertEqual(copied.status, 0, copied.stderr)
        XCTAssertTrue(copied.stdout.contains("checksums match the source's"), copied.stdout)
        XCTAssertTrue(copied.stdout.split(separator: "\n").contains { $0.split(separator: " ").prefix(2) == ["room_links", "1"] },
                      copied.stdout)
        // Again: the target now holds the rows, so it is refused.
        let again = try world.cli("migrate-store", "--from", sqlite, "--to", database.url)
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.stderr.contains("the target database is not empty"), again.stderr)

        try world.editConfig { $0.replacingOccurrences(of: "  path: isthmus.sqlite", with: "  url: \"\(database.url)\"") }
        // What serve will read is the copy: `links` with the new config sees the link.
        XCTAssertEqual(try world.links().map { $0["matrix_room"] }, [room])
        try await world.startBridge()
        defer { world.stopBridge() }
        try await alice.send("matrix after migration", to: room)
        try romeo.sendGroupchat(to: muc, body: "xmpp after migration")

        // Each queued message once, in order, and then the new one: each list ends with the sentinel sent after the
        // others, so a doubled message (which would come before it, per-room order holds) is seen.
        let inMatrix = try await world.matrixMessages(alice, in: room, untilBody: "xmpp after migration", excluding: alice.userID,
                                                      timeout: 60)
        XCTAssertEqual(inMatrix.map(\.body), ["before, from xmpp"] + (0..<3).map { "xmpp while down \($0)" } + ["xmpp after migration"])
        let inXMPP = try await world.xmppMessages(romeo, from: muc, untilBody: "matrix after migration", excludingNick: "Romeo",
                                                  timeout: 60)
        XCTAssertEqual(inXMPP.map(\.body), (0..<3).map { "matrix while down \($0)" } + ["matrix after migration"])
        try await alice.send("sentinel from matrix", to: room)
        try romeo.sendGroupchat(to: muc, body: "sentinel from xmpp")
        let lateInXMPP = try await world.xmppMessages(romeo, from: muc, untilBody: "sentinel from matrix", excludingNick: "Romeo")
        XCTAssertEqual(lateInXMPP.map(\.body), ["sentinel from matrix"], "a message reached the MUC twice")
        let lateInMatrix = try await world.matrixMessages(alice, in: room, untilBody: "sentinel from xmpp", excluding: alice.userID)
        XCTAssertEqual(lateInMatrix.map(\.body).dropFirst(inMatrix.count), ["sentinel from xmpp"], "a message reached Matrix twice")
        romeo.close()
    }
}
