import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// Client mode with the bridge's account on the bed's SASL2 host (`relay@sasl2.localhost`: Prosody 0.12.3 with
/// mod_sasl2 and mod_sasl2_bind2), in the MUC service of the same server: the login goes through SASL2 with Bind2, and
/// everything relays as on the legacy host. On ejabberd 23.01, which has no SASL2, the same scenarios run with the
/// account on the ordinary host, and the login must be legacy SASL there.
final class RelaySASL2Tests: XCTestCase {
    /// The account's domain: the SASL2 host, or ejabberd's only one (`sasl2` false).
    func accountDomain() throws -> (domain: String, sasl2: Bool) {
        let bed = try TestBed.fromEnvironment()
        if let domain = try bed.sasl2DomainIfOffered() { return (domain, true) }
        return (bed.xmppDomain, false)
    }

    /// The connection says how it logged in; Bind2 names the resource from our tag (`Isthmus~…`), which the legacy
    /// bind never does. Without SASL2: no SASL2 in the login, the configured resource.
    func assertLoggedIn(_ world: EndToEndHarness, _ domain: String, _ login: String, sasl2: Bool,
                        file: StaticString = #filePath, line: UInt = #line) {
        let log = world.bridge?.log ?? "", path = world.bridge?.logFile.path ?? "-"
        guard sasl2 else {
            XCTAssertTrue(log.contains("xmpp.jid=relay@\(domain)/isthmus"), "the configured resource in \(path)", file: file, line: line)
            XCTAssertTrue(log.contains("xmpp.login="), "no login line in \(path)", file: file, line: line)
            XCTAssertFalse(log.contains("over SASL2"), "SASL2 where the server offers none: \(path)", file: file, line: line)
            return
        }
        XCTAssertTrue(log.contains("xmpp.jid=relay@\(domain)/Isthmus~"), "no Bind2 resource in \(path)", file: file, line: line)
        XCTAssertTrue(log.contains("xmpp.login=\"\(login)\""), "no '\(login)' in \(path)", file: file, line: line)
    }

    /// Text both ways once; the store keeps the login's credentials for the next (read with sqlite3 as the bridge runs).
    func testTextBothWaysThroughARelayLoggedInWithSASL2AndBind2() async throws {
        let (domain, sasl2) = try accountDomain()
        let (world, alice, muc, romeo, room) = try await RelayTests.relayPair("relay-sasl2", database: .sqlite, domain: domain)
        defer { world.stopBridge() }
        assertLoggedIn(world, domain, "SCRAM-SHA-1 over SASL2 with Bind2", sasl2: sasl2)
        let database = world.directory.appendingPathComponent("isthmus.sqlite").path
        try await eventually("the login's credentials kept in the store") {
            let kept = try BridgeProcess.run([database, """
                PRAGMA busy_timeout = 5000;
                SELECT account, scram_hash LIKE 'SCRAM-SHA-%', scram_iterations >= 4096, length(salted_password) >= 20,
                       length(user_agent_id) FROM xmpp_credentials;
                """], executable: URL(fileURLWithPath: "/usr/bin/sqlite3"))
            return kept.stdout.split(separator: "\n").last == "relay@\(domain)|1|1|1|36"
        }

        try await alice.send("hello over sasl2", to: room)
        let received = try await world.xmppMessages(romeo, from: muc, count: 1, excludingNick: "Romeo")
        XCTAssertEqual(received.map(\.body), ["<Alice> hello over sasl2"])
        XCTAssertEqual(received.first?.from?.resource, "Matrix")
        try romeo.sendGroupchat(to: muc, body: "hi from xmpp")
        let fromXMPP = try await world.matrixMessages(alice, in: room, untilBody: "hi from xmpp")
        XCTAssertEqual(fromXMPP.map(\.body), ["hello over sasl2", "hi from xmpp"], "nothing echoed, nothing doubled")
        romeo.close()
    }

    /// kill -9 under two-way traffic, then a restart: the kept session is taken up again after the SASL2 login (with
    /// `<resume/>` after the features: 0.12.3 cannot resume inline), the relay occupant never leaves, every message
    /// once — the legacy host's test, for this account.
    func testAKillNineThenARestartResumesTheSessionAfterSASL2() async throws {
        let (domain, sasl2) = try accountDomain()
        let world = try await RelayTests.killNineThenRestartResumes("relay-sasl2-resume", domain: domain)
        defer { world.stopBridge() }
        assertLoggedIn(world, domain, "SCRAM-SHA-1 over SASL2", sasl2: sasl2)   // no Bind2: the kept session is resumed instead
        XCTAssertTrue(world.bridge?.log.contains("xmpp.resumed=true") == true, "the restarted bridge connected on the resumed session")
    }
}
