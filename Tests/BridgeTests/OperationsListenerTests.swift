import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing
import TestSupport

/// The operations listener over a real loopback socket: routes, methods, the scrape and the readiness answer.
@Suite struct OperationsListenerTests {
    func withListener(_ body: (Int, BridgeMetrics) async throws -> Void) async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        let metrics = BridgeMetrics()
        let listener = try OperationsListener(host: "127.0.0.1", port: 0, metrics: metrics, store: store, logger: .disabled)
        let task = Task { await listener.run() }
        do {
            try await body(listener.port, metrics)
        } catch {
            listener.shutdown()
            await task.value
            throw error
        }
        listener.shutdown()
        await task.value
    }

    @Test func servesMetricsHealthAndReadiness() async throws {
        try await withListener { port, metrics in
            let scrape = try await MetricsScrape.fetch(port: port)
            #expect(scrape.text.contains("# TYPE isthmus_messages_total counter\n"))
            #expect(scrape["isthmus_links{status=\"active\"}"] == 0)
            #expect(scrape.samples["isthmus_inbox_depth"] == 0)
            #expect(scrape.samples["process_open_fds"] != nil)

            let health = try await RawHTTP.request("GET", port: port, "/health")
            #expect(health.text == #"{"status":"ok"}"#)
            let notReady = try await RawHTTP.request("GET", port: port, "/ready")
            #expect(notReady.status == 503)
            #expect(notReady.text == #"{"reasons":["the XMPP component is not connected","the homeserver has not answered yet"],"status":"not_ready"}"#
                || notReady.text == #"{"status":"not_ready","reasons":["the XMPP component is not connected","the homeserver has not answered yet"]}"#)
            metrics.health.xmppConnected(true)
            metrics.homeserverRequest(.versions, succeeded: true, duration: .milliseconds(3))
            let ready = try await RawHTTP.request("GET", port: port, "/ready")
            #expect(ready.status == 200)
            let after = try await MetricsScrape.fetch(port: port)
            #expect(after["isthmus_homeserver_requests_total{method=\"versions\",outcome=\"success\"}"] == 1)
            #expect(after["isthmus_homeserver_request_duration_seconds_count{method=\"versions\"}"] == 1)
        }
    }

    @Test func aStandbyIsNotReadyWhateverElseHolds() async throws {
        try await withListener { port, metrics in
            metrics.health.setStandby(true)
            metrics.health.xmppConnected(true)
            metrics.homeserverRequest(.versions, succeeded: true, duration: .milliseconds(3))
            let standby = try await RawHTTP.request("GET", port: port, "/ready")
            #expect(standby.status == 503)
            #expect(standby.text.contains(#""status":"standby""#))
            #expect(try await RawHTTP.request("GET", port: port, "/health").status == 200)
            metrics.health.setStandby(false)
            #expect(try await RawHTTP.request("GET", port: port, "/ready").status == 200)
        }
    }

    @Test func refusesOtherPathsAndMethods() async throws {
        try await withListener { port, _ in
            var statuses: [Int] = []
            statuses.append(try await RawHTTP.request("GET", port: port, "/metrics/extra").status)
            statuses.append(try await RawHTTP.request("GET", port: port, "/").status)
            statuses.append(try await RawHTTP.request("PUT", port: port, "/metrics", body: Data("{}".utf8)).status)
            statuses.append(try await RawHTTP.request("DELETE", port: port, "/ready").status)
            #expect(statuses == [404, 404, 405, 405])
        }
    }
}
