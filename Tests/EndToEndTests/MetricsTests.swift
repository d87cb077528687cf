import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// The operations listener against real Prosody and Synapse: counters move by exactly what was bridged, `/ready`
/// follows the XMPP server, and JSON logs parse line by line.
final class MetricsTests: XCTestCase {
    static func messages(_ direction: String, _ kind: String) -> String {
        "isthmus_messages_total{direction=\"\(direction)\",kind=\"\(kind)\"}"
    }

    func testMessageCountersMoveByExactlyTheMessagesBridgedEachWay() async throws {
        let world = try EndToEndHarness("metrics")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("metrics")
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        // Traffic before the baseline (the first message also sets up Romeo's ghost and Alice's puppet).
        try await alice.send("warm-up", to: room)
        try romeo.sendGroupchat(to: muc, body: "warm-up")
        _ = try await world.xmppMessages(romeo, from: muc, count: 1, excludingNick: "Romeo")
        _ = try await world.matrixMessages(alice, in: room, count: 1, excluding: alice.userID)
        let x2mText = Self.messages("xmpp_to_matrix", "text"), m2xText = Self.messages("matrix_to_xmpp", "text")
        try await eventually("the warm-up messages counted", timeout: 30) {
            let scrape = try await MetricsScrape.fetch(port: world.bed.metricsPort)
            return scrape[x2mText] >= 1 && scrape[m2xText] >= 1
        }
        let before = try await MetricsScrape.fetch(port: world.bed.metricsPort)

        // Matrix → XMPP: 3 texts, an emote, a notice, then the sentinel. XMPP → Matrix: 4 texts, an emote, the sentinel.
        for index in 0..<3 { try await alice.send("m\(index)", to: room) }
        try await alice.send("waves", to: room, msgtype: "m.emote")
        try await alice.send("a notice", to: room, msgtype: "m.notice")
        try await alice.send("m-end", to: room)
        for index in 0..<4 { try romeo.sendGroupchat(to: muc, body: "x\(index)") }
        try romeo.sendGroupchat(to: muc, body: "/me bows")
        try romeo.sendGroupchat(to: muc, body: "x-end")
        let inXMPP = try await world.xmppMessages(romeo, from: muc, count: 6, excludingNick: "Romeo")
        XCTAssertEqual(inXMPP.last?.body, "m-end")
        let inMatrix = try await world.matrixMessages(alice, in: room, count: 7, excluding: alice.userID)
        XCTAssertEqual(inMatrix.last?.body, "x-end")

        // The sentinels are counted last (per-room order): once they are, everything before them is.
        let after = try await eventuallyValue("the sentinels counted", timeout: 30) { () -> MetricsScrape? in
            let scrape = try await MetricsScrape.fetch(port: world.bed.metricsPort)
            return scrape[x2mText] - before[x2mText] >= 5 && scrape[m2xText] - before[m2xText] >= 4 ? scrape : nil
        }
        func delta(_ series: String) -> Double { after[series] - before[series] }
        XCTAssertEqual(delta(x2mText), 5, after.text)
        XCTAssertEqual(delta(Self.messages("xmpp_to_matrix", "emote")), 1)
        XCTAssertEqual(delta(m2xText), 4, after.text)
        XCTAssertEqual(delta(Self.messages("matrix_to_xmpp", "emote")), 1)
        XCTAssertEqual(delta(Self.messages("matrix_to_xmpp", "notice")), 1)
        XCTAssertEqual(delta(Self.messages("matrix_to_xmpp", "media")), 0)
        XCTAssertEqual(delta("isthmus_bridge_latency_seconds_count{direction=\"xmpp_to_matrix\"}"), 6)
        XCTAssertEqual(delta("isthmus_bridge_latency_seconds_count{direction=\"matrix_to_xmpp\"}"), 6)
        XCTAssertEqual(delta("isthmus_message_failures_total{direction=\"xmpp_to_matrix\",reason=\"homeserver_refused\"}"), 0)
        XCTAssertEqual(delta("isthmus_message_failures_total{direction=\"matrix_to_xmpp\",reason=\"xmpp_refused\"}"), 0)
        XCTAssertGreaterThanOrEqual(delta("isthmus_homeserver_requests_total{method=\"send\",outcome=\"success\"}"), 6)
        XCTAssertGreaterThanOrEqual(delta("isthmus_homeserver_transactions_total"), 1)
        XCTAssertEqual(after["isthmus_xmpp_connected"], 1)
        XCTAssertEqual(after["isthmus_links{status=\"active\"}"], 1)
        XCTAssertEqual(after["isthmus_puppets"], 1)
        XCTAssertGreaterThanOrEqual(after["isthmus_ghosts"], 1)
        XCTAssertEqual(after["isthmus_inbox_depth"], 0)
        XCTAssertGreaterThan(after["process_resident_memory_bytes"], 0)
        XCTAssertGreaterThan(after["process_open_fds"], 0)
        XCTAssertGreaterThan(after["process_start_time_seconds"], 1_700_000_000)
        XCTAssertFalse(after.text.contains("@alice"), "no user ids in labels")
        romeo.close()
    }

    func testReadyTurns503WhenProsodyStopsAnd200WhenItIsBack() async throws {
        let world = try EndToEndHarness("ready")
        try await world.startBridge()
        defer { world.stopBridge() }
        let port = world.bed.metricsPort
        try await eventually("/ready 200", timeout: 30) { try await RawHTTP.request("GET", port: port, "/ready").status == 200 }
        let health = try await RawHTTP.request("GET", port: port, "/health").status
        let post = try await RawHTTP.request("POST", port: port, "/ready").status
        let unknown = try await RawHTTP.request("GET", port: port, "/nothing").status
        XCTAssertEqual([health, post, unknown], [200, 405, 404])

        try world.bed.kill(.xmpp)
        do {
            let stopped = ContinuousClock.now
            let answer = try await eventuallyValue("/ready 503 after Prosody stopped", timeout: 30) { () -> RawHTTP.Response? in
                let response = try await RawHTTP.request("GET", port: port, "/ready")
                return response.status == 503 ? response : nil
            }
            XCTAssertLessThan(ContinuousClock.now - stopped, .seconds(30))
            let body = try JSONSerialization.jsonObject(with: answer.body) as? [String: Any]
            XCTAssertEqual(body?["status"] as? String, "not_ready")
            XCTAssertEqual(body?["reasons"] as? [String], ["the XMPP component is not connected"], answer.text)
            let stillHealthy = try await RawHTTP.request("GET", port: port, "/health").status
            XCTAssertEqual(stillHealthy, 200, "the process still runs")
            let scrape = try await MetricsScrape.fetch(port: port)
            XCTAssertEqual(scrape["isthmus_xmpp_connected"], 0)
        } catch {
            try? world.bed.startOne(.xmpp)
            throw error
        }
        try world.bed.startOne(.xmpp)
        try await eventually("/ready 200 with Prosody back", timeout: 60) {
            try await RawHTTP.request("GET", port: port, "/ready").status == 200
        }
        let scrape = try await MetricsScrape.fetch(port: port)
        XCTAssertEqual(scrape["isthmus_xmpp_connected"], 1)
        XCTAssertGreaterThanOrEqual(scrape["isthmus_xmpp_reconnects_total"], 1)
    }

    func testJSONLogsParseLineByLineAndSIGHUPRereadsTheLevels() async throws {
        let world = try EndToEndHarness("json-logs")
        try world.editConfig {
            $0.replacingOccurrences(of: "logging:\n  level: debug\n", with: "logging:\n  level: debug\n  format: json\n  levels:\n    xmpp: info\n")
        }
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("jsonlogs")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        try await alice.send("logged", to: room)
        let bridge = try XCTUnwrap(world.bridge)
        try await eventually("a portal debug line", timeout: 30) { bridge.log.contains("\"logger\":\"bridge.portal\"") }

        // SIGHUP re-reads the levels: now everything at notice but the portal.
        try world.editConfig {
            $0.replacingOccurrences(of: "  levels:\n    xmpp: info\n", with: "  level: notice\n  levels:\n    bridge.portal: debug\n")
                .replacingOccurrences(of: "  level: debug\n", with: "")
        }
        kill(bridge.processIdentifier, SIGHUP)
        try await eventually("levels re-read", timeout: 10) { bridge.log.contains("SIGHUP: log reopened and log levels re-read") }
        world.stopBridge()

        let lines = bridge.log.split(separator: "\n")
        XCTAssertGreaterThan(lines.count, 10)
        let rfc3339 = try NSRegularExpression(pattern: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$"#)
        var records: [[String: Any]] = []
        for line in lines {
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], String(line))
            let time = try XCTUnwrap(object["time"] as? String, String(line))
            XCTAssertEqual(rfc3339.numberOfMatches(in: time, range: NSRange(time.startIndex..., in: time)), 1, time)
            XCTAssertNotNil(Logger.Level(name: object["level"] as? String ?? ""), String(line))
            XCTAssertNotNil(object["logger"] as? String, String(line))
            XCTAssertNotNil(object["message"] as? String, String(line))
            records.append(object)
        }
        let reread = try XCTUnwrap(records.firstIndex { $0["message"] as? String == "SIGHUP: log reopened and log levels re-read" })
        XCTAssertEqual(records[reread]["log.levels"] as? String, "bridge.portal=debug")
        XCTAssertTrue(records.contains { $0["matrix.room.id"] as? String == room }, "metadata fields are JSON fields")
        func level(_ record: [String: Any]) -> Logger.Level { Logger.Level(name: record["level"] as? String ?? "") ?? .critical }
        for record in records[..<reread] where (record["logger"] as? String ?? "").hasPrefix("xmpp") {
            XCTAssertGreaterThanOrEqual(level(record), .info, "xmpp.* at info before SIGHUP: \(record)")
        }
        for record in records[(reread + 1)...] where record["logger"] as? String != "bridge.portal" {
            XCTAssertGreaterThanOrEqual(level(record), .notice, "only the portal below notice after SIGHUP: \(record)")
        }
    }
}
