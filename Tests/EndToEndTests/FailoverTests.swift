import Foundation
import IsthmusCommon
import IsthmusFakes
import Network
import TestSupport
import XCTest
import XMPP

/// An active/standby pair (`ha.enabled`) on one database behind haproxy, as an operator runs it (docs/deploy.md §10):
/// kill -9 of the active instance hands over to the standby within 15 s and back again, a graceful stop hands over
/// at once, and every message sent before, during and after arrives exactly once and in order.
final class FailoverTests: XCTestCase {
    /// One `serve` process of the pair: its own listeners, the bed's database and servers.
    struct Instance {
        let name: String
        let appServicePort: Int
        let metricsPort: Int
        let config: URL
    }

    /// Writes the instance's config: the scenario's, with its own listeners and `ha:` on. The appservice URL stays the
    /// bed's (haproxy) and the database the scenario's, so both instances (and the CLI) share it.
    func instance(_ name: String, appServicePort: Int, metricsPort: Int, world: EndToEndHarness) throws -> Instance {
        var text = try String(contentsOf: world.config, encoding: .utf8)
        let bed = world.bed
        // Matrix client mode has no appservice section, so no listener of its own.
        let appService = text.contains("appservice:\n")
        for (from, to) in [("listen: 127.0.0.1:\(bed.appServicePort)\n", "listen: 127.0.0.1:\(appServicePort)\n"),
                           ("listen: 127.0.0.1:\(bed.metricsPort)\n", "listen: 127.0.0.1:\(metricsPort)\n")]
        where from != to && (appService || !from.contains("\(bed.appServicePort)")) {
            XCTAssertTrue(text.contains(from), "the bed's config has \(from)")
            text = text.replacingOccurrences(of: from, with: to)
        }
        text += "ha:\n  enabled: true\n  instance_name: \(name)\n"
        let url = world.directory.appendingPathComponent("isthmus-\(name).yaml")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return Instance(name: name, appServicePort: appServicePort, metricsPort: metricsPort, config: url)
    }

    var starts = 0
    func start(_ instance: Instance, world: EndToEndHarness) throws -> BridgeProcess {
        starts += 1
        return try BridgeProcess(config: instance.config,
                                 logFile: world.directory.appendingPathComponent("serve-\(instance.name)-\(starts).log"))
    }

    /// `GET /ready` on the instance's operations listener; nil while nothing answers.
    func readiness(_ instance: Instance) async -> RawHTTP.Response? {
        try? await RawHTTP.request("GET", port: instance.metricsPort, "/ready", timeout: 2)
    }

    /// Waits until `instance` is active (`/ready` 200); returns how long that took from `since`.
    func waitActive(_ instance: Instance, process: BridgeProcess, since: Date, timeout: Double = 30) async throws -> Double {
        try await eventually("\(instance.name) active (log: \(process.logFile.path))", timeout: timeout, pollEvery: .milliseconds(50)) {
            guard process.isRunning else { throw EndToEndHarness.BridgeExited(log: process.log) }
            return await readiness(instance)?.status == 200
        }
        return Date().timeIntervalSince(since)
    }

    /// Waits until `instance` stands by: `/ready` answers 503 `standby`.
    func waitStandby(_ instance: Instance, process: BridgeProcess) async throws {
        try await eventually("\(instance.name) standing by (log: \(process.logFile.path))", timeout: 30, pollEvery: .milliseconds(50)) {
            guard process.isRunning else { throw EndToEndHarness.BridgeExited(log: process.log) }
            guard let answer = await readiness(instance) else { return false }
            return answer.status == 503 && answer.text.contains("\"standby\"")
        }
    }

    /// A free TCP port on loopback (bound, read, closed).
    func freePort() throws -> Int {
        let probe = try TCPListener()
        defer { probe.close() }
        return probe.port
    }

    /// The pair on the test bed's PostgreSQL, as on two hosts.
    func testFailoverOnPostgreSQL() async throws {
        try await failover("failover-pg", on: .postgres)
    }

    /// The pair on one SQLite file: two processes on one host.
    func testFailoverOnSQLite() async throws {
        try await failover("failover-sqlite", on: .sqlite)
    }

    /// The pair in client mode (the bridge as the account relay@…, on PostgreSQL): only the active instance is logged
    /// in; after kill -9 the standby takes over the session the store kept — resumed, so the relay never left the room.
    func testFailoverInClientMode() async throws {
        try await failover("failover-client", on: .postgres, clientMode: true)
    }

    /// The pair in Matrix client mode (the bridge as the Matrix account @relay:localhost, whose tokens last 10 s in the
    /// bed): only the active instance uses — and so refreshes — the session; the standby makes no call meanwhile
    /// (refreshing a rotated refresh token could make the homeserver revoke the session), and takes over the session
    /// the store kept, refreshing from there.
    func testFailoverInMatrixClientMode() async throws {
        try await failover("failover-mclient", on: .postgres, matrixClientMode: true)
    }

    /// Two-way traffic through a linked room; kill -9 of the active instance (the standby takes over), the killed one
    /// back as the standby, kill -9 of the new active one (the first takes over again), then a graceful stop (the
    /// standby takes over at once). Every message arrives exactly once, in order.
    func failover(_ name: String, on backend: StoreBackend, clientMode: Bool = false, matrixClientMode: Bool = false) async throws {
        // The scenario's config (and so the CLI's) names the database: a file, or a PostgreSQL database of its own.
        let world = try EndToEndHarness(name, database: backend)
        if clientMode { try RelayTests.clientMode(world) }
        if matrixClientMode { try world.editConfig(MatrixRelayTests.matrixClientConfig(world.bed)) }
        let bed = world.bed
        // Ports: the bed's appservice port N+3 is haproxy's; the instances take the spare N+8 and N+9 (N+7 is the bed's
        // PostgreSQL), the bed's metrics port N+4 (no other bridge runs in this bed meanwhile: they all listen on N+3)
        // and a free one.
        let base = bed.c2sPort
        let a = try instance("a", appServicePort: base + 8, metricsPort: bed.metricsPort, world: world)
        let b = try instance("b", appServicePort: base + 9, metricsPort: try freePort(), world: world)
        // Stopped however the start ends (stop-lb is idempotent): a half-started haproxy would hold the bed's
        // appservice port for every later test.
        defer { try? bed.stopLoadBalancer() }
        try bed.startLoadBalancer(backends: [(a.appServicePort, a.metricsPort), (b.appServicePort, b.metricsPort)])

        var processA = try start(a, world: world)
        defer { processA.kill9() }
        _ = try await waitActive(a, process: processA, since: Date())
        var processB = try start(b, world: world)
        defer { processB.kill9() }
        try await waitStandby(b, process: processB)

        let alice = try await world.matrixUser("alice")
        let muc = world.muc("failover")
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        if clientMode { try await alice.setDisplayname("Alice", in: room) }

        var fromMatrix: [String] = []
        var fromXMPP: [String] = []
        /// Sends `count` messages each way, alternating; `midway` runs after the first third.
        func traffic(_ phase: String, count: Int = 9, midway: () throws -> Void = {}) async throws {
            for index in 0..<count {
                let m = "m-\(phase)-\(index)", x = "x-\(phase)-\(index)"
                try await alice.send(m, to: room)
                fromMatrix.append(clientMode ? "<Alice> \(m)" : m)
                _ = try romeo.sendGroupchat(to: muc, body: x)
                fromXMPP.append(matrixClientMode ? "Romeo: \(x)" : x)
                if index == count / 3 { try midway() }
            }
        }

        // Before: the active instance bridges both ways.
        try await traffic("before")
        _ = try await world.matrixMessages(alice, in: room, untilBody: fromXMPP.last!, excluding: alice.userID, timeout: 60)
        if matrixClientMode {
            // The standby's session counters first, then the active one's: once the active instance has refreshed, a
            // token fell due while the standby stood by — which it did not act on.
            try await eventually("a refreshed the session", timeout: 30) {
                try await MetricsScrape.fetch(port: a.metricsPort)["isthmus_matrix_session_events_total{event=\"refreshed\"}"] >= 1
            }
            let standby = try await MetricsScrape.fetch(port: b.metricsPort)
            XCTAssertEqual(standby["isthmus_matrix_session_events_total{event=\"refreshed\"}"], 0, "the standby refreshed nothing")
            XCTAssertEqual(standby["isthmus_matrix_session_events_total{event=\"logged_in\"}"], 0, "the standby did not log in")
        }

        // kill -9 of the active instance in the middle of two-way traffic: the standby takes over.
        var killed = Date()
        try await traffic("kill-a") {
            processA.kill9()
            killed = Date()
        }
        let firstTakeover = try await waitActive(b, process: processB, since: killed)
        if clientMode {
            XCTAssertTrue(processB.log.contains("Resumed the XMPP session"), "b resumed a's session; log:\n\(processB.log.suffix(3000))")
            XCTAssertEqual(RelayTests.relayLeft(romeo, muc), [], "the relay occupant never left the room")
        }
        try await traffic("on-b")

        // The killed instance comes back as the standby; kill -9 of the new active one hands back.
        processA = try start(a, world: world)
        try await waitStandby(a, process: processA)
        try await traffic("kill-b") {
            processB.kill9()
            killed = Date()
        }
        let secondTakeover = try await waitActive(a, process: processA, since: killed)
        try await traffic("on-a")

        // A graceful stop (SIGTERM) while the instance is still catching up (archive, resends, inbox) and traffic is
        // in flight releases the lease: the standby takes over on its next poll. (Once, on ejabberd, this delivered a
        // Matrix → XMPP message late: a transaction the homeserver retried into the next instance landed behind later
        // ones in the inbox; drains after a timeline check now follow the timeline.)
        processB = try start(b, world: world)
        try await waitStandby(b, process: processB)
        let stopped = Date()
        XCTAssertEqual(processA.stop(), 0, "a graceful stop exits 0; log:\n\(processA.log.suffix(3000))")
        let gracefulTakeover = try await waitActive(b, process: processB, since: stopped)
        XCTAssertTrue(processA.log.contains("Bridge lease released"), "the stopping instance released the lease")
        try await traffic("after")

        print("failover takeover times: kill -9 a→b \(String(format: "%.1f", firstTakeover)) s, "
              + "kill -9 b→a \(String(format: "%.1f", secondTakeover)) s, SIGTERM a→b \(String(format: "%.1f", gracefulTakeover)) s")
        let bound = TestTimeScale.scaled(15)
        XCTAssertLessThanOrEqual(firstTakeover, bound, "the standby is active within 15 s of kill -9")
        XCTAssertLessThanOrEqual(secondTakeover, bound, "the failover back is active within 15 s of kill -9")
        XCTAssertLessThanOrEqual(gracefulTakeover, bound, "a graceful stop hands over within 15 s")

        // Exactly once, in order: a sentinel each way, sent last, comes after any doubled or late copy.
        try await alice.send("m-end", to: room)
        _ = try romeo.sendGroupchat(to: muc, body: "x-end")
        let inMatrix = try await world.matrixMessages(alice, in: room, untilBody: matrixClientMode ? "Romeo: x-end" : "x-end",
                                                      excluding: alice.userID, timeout: 120)
        XCTAssertEqual(inMatrix.map(\.body), fromXMPP + [matrixClientMode ? "Romeo: x-end" : "x-end"])
        let end = clientMode ? "<Alice> m-end" : "m-end"
        if matrixClientMode {
            // b's session is the one a kept in the store: taken over, not a login of its own.
            let scrape = try await MetricsScrape.fetch(port: b.metricsPort)
            XCTAssertEqual(scrape["isthmus_matrix_session_events_total{event=\"logged_in\"}"], 0, "b took the stored session over")
        }
        let inXMPP = try await world.xmppMessages(romeo, from: muc, untilBody: end, excludingNick: "Romeo", timeout: 120)
        XCTAssertEqual(inXMPP.map(\.body), fromMatrix + [end])
        XCTAssertEqual(processB.stop(), 0, "the last active instance stops cleanly; log:\n\(processB.log.suffix(3000))")
        romeo.close()
    }

    /// The lease taken away under a running active instance (what a standby does after a pause longer than the lease):
    /// the active one stops acting and exits with status 75, so its supervisor brings it back as the standby.
    func testAnActiveInstanceThatLosesTheLeaseExitsWith75() async throws {
        let world = try EndToEndHarness("lease-lost", database: .sqlite)   // the lease is stolen with sqlite3
        let bed = world.bed
        let a = try instance("a", appServicePort: bed.c2sPort + 8, metricsPort: bed.metricsPort, world: world)
        let process = try start(a, world: world)
        defer { process.kill9() }
        _ = try await waitActive(a, process: process, since: Date())
        // Another owner's grant, far in the future, written as a standby would after the lease lapsed.
        let database = world.directory.appendingPathComponent("isthmus.sqlite").path
        let steal = try BridgeProcess.run([database, """
            PRAGMA busy_timeout = 5000;
            UPDATE bridge_lease SET owner = 'thief', epoch = epoch + 1, expires_ms = expires_ms + 3600000 WHERE id = 1;
            """], executable: URL(fileURLWithPath: "/usr/bin/sqlite3"))
        XCTAssertEqual(steal.status, 0, steal.stderr)
        try await eventually("serve exited (log: \(process.logFile.path))", timeout: 15, pollEvery: .milliseconds(50)) { !process.isRunning }
        XCTAssertEqual(process.terminationStatus, 75, "log:\n\(process.log.suffix(3000))")
        XCTAssertTrue(process.log.contains("Bridge lease lost; this instance stops acting and exits"))

        // Restarted, it stands by (the thief holds the lease), and a standby stops cleanly on SIGTERM.
        let again = try start(a, world: world)
        defer { again.kill9() }
        try await waitStandby(a, process: again)
        XCTAssertTrue(again.log.contains("Another instance holds the bridge lease"), "the log names the holder")
        XCTAssertEqual(again.stop(), 0, "a standby stops cleanly; log:\n\(again.log.suffix(3000))")
    }
}
