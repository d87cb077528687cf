import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixAppService
import TestSupport
import Testing

/// The listener against strangers over a real loopback socket: refused before the body, never crowded out,
/// per-route body limits, a quiet log. Serialized: it measures this process's resident memory.
@Suite(.serialized) struct AppServiceListenerHardeningTests {
    static let token = "hs-secret"

    /// Runs `body` with a listener on a free port; `sink` receives its log.
    func withListener(_ configuration: AppServiceListener.Configuration = .init(host: "127.0.0.1", port: 0, hsToken: token),
                      handler: RecordingAppServiceHandler = RecordingAppServiceHandler(), sink: LogSink = .discard,
                      _ body: (Int) async throws -> Void) async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        let logger = Logger(label: "matrix.appservice", level: .info, sink: sink)
        let listener = try AppServiceListener(configuration: configuration, store: store, handler: handler, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await listener.run() }
            defer { listener.shutdown() }
            try await body(listener.port)
        }
    }

    static func head(_ method: String, _ path: String, bearer: String? = nil, extra: [String] = []) -> String {
        var lines = ["\(method) \(path) HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
        if let bearer { lines.append("Authorization: Bearer \(bearer)") }
        return (lines + extra).joined(separator: "\r\n") + "\r\n\r\n"
    }

    /// This process's resident memory (`VmRSS` of /proc/self/status), in bytes.
    static func residentBytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try #require(Int(line.split(separator: " ")[1])) * 1024
    }

    @Test func aWrongOrMissingTokenIsRefusedBeforeTheBodyAndCostsNoMemory() async throws {
        let bodySize = 16 << 20
        let body = [UInt8](repeating: 0x20, count: bodySize)  // resident before the baseline is taken
        try await withListener { port in
            let baseline = try Self.residentBytes()
            var held: [RawSocket] = []
            for index in 0..<50 {
                let socket = try RawSocket.connect(port: port)
                let bearer = index.isMultiple(of: 2) ? nil : "wrong-token"
                try socket.send(Self.head("PUT", "/_matrix/app/v1/transactions/t\(index)", bearer: bearer,
                                          extra: ["Content-Length: \(bodySize)"]))
                // Only the head went out: the whole body is still to send, and the answer is already there.
                let answer = socket.receiveUntilClosed(timeout: .seconds(5))
                try #require(answer.status == (bearer == nil ? 401 : 403), "answered before the body was sent")
                #expect(answer.closed, "the listener closes the connection after refusing")
                #expect(answer.errcode == (bearer == nil ? "M_UNAUTHORIZED" : "M_FORBIDDEN"))
                #expect(answer.text.lowercased().contains("connection: close"))
                // Sending the body now goes nowhere (the peer is gone); it must not land in the bridge's memory.
                try? socket.send(body, timeout: .seconds(2))
                held.append(socket)
            }
            let growth = try Self.residentBytes() - baseline
            #expect(growth < 8 << 20, "resident memory grew by \(growth) bytes across 50 refused 16 MiB requests")
            withExtendedLifetime(held) {}
        }
    }

    @Test func fiveHundredIdleStrangersDoNotStopTheHomeserversTransaction() async throws {
        let handler = RecordingAppServiceHandler()
        try await withListener(handler: handler) { port in
            var strangers: [RawSocket] = []
            for index in 0..<500 {
                let socket = try RawSocket.connect(port: port, waitUpTo: nil)
                if index.isMultiple(of: 2) {
                    try? socket.send("PUT /_matrix/app/v1/transactions/x\(index) HTTP/1.1\r\nHost: 127.0.0.1\r\n", timeout: .milliseconds(100))  // never finished
                }
                strangers.append(socket)
            }
            let response = try await withDeadline("the homeserver's transaction", seconds: 5) {
                try await RawHTTP.request("PUT", port: port, "/_matrix/app/v1/transactions/hs-1", bearer: Self.token,
                                          body: AppServiceListenerLoopbackTests.transactionBody(["$from-hs"]), timeout: 5)
            }
            #expect(response.status == 200)
            #expect(handler.events.map(\.eventID.rawValue) == ["$from-hs"])
            withExtendedLifetime(strangers) {}
        }
    }

    @Test func eachRouteHasItsOwnBodyLimit() async throws {
        let handler = RecordingAppServiceHandler()
        try await withListener(handler: handler) { port in
            // Declared too large for a ping: 413 on the head alone.
            let declared = try RawSocket.connect(port: port)
            try declared.send(Self.head("POST", "/_matrix/app/v1/ping", bearer: Self.token, extra: ["Content-Length: \(100 << 10)"]))
            let refused = declared.receiveUntilClosed()
            #expect(refused.status == 413 && refused.errcode == "M_TOO_LARGE" && refused.closed)

            // Chunked past the limit: 413 once the body has ended.
            let chunked = try RawSocket.connect(port: port)
            try chunked.send(Self.head("POST", "/_matrix/app/v1/ping", bearer: Self.token, extra: ["Transfer-Encoding: chunked"]))
            let chunk = String(repeating: "x", count: 10 << 10)
            for _ in 0..<10 { try chunked.send(String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n") }
            try chunked.send("0\r\n\r\n")
            let chunkedAnswer = chunked.receiveUntilClosed()
            #expect(chunkedAnswer.status == 413 && chunkedAnswer.errcode == "M_TOO_LARGE")
            #expect(handler.pings.isEmpty)

            // The health probe takes no body at all.
            let probe = try RawSocket.connect(port: port)
            try probe.send(Self.head("GET", "/health", extra: ["Content-Length: 10"]))
            #expect(probe.receiveUntilClosed().status == 413)

            // A ping within its limit, and a 1 MiB transaction, are served.
            let ping = try await RawHTTP.request("POST", port: port, "/_matrix/app/v1/ping", bearer: Self.token,
                                                 body: Data(#"{"transaction_id":"p"}"#.utf8))
            #expect(ping.status == 200)
            var large = AppServiceListenerLoopbackTests.transactionBody(["$big"])
            large.append(Data(repeating: 0x20, count: (1 << 20) - large.count))
            #expect(large.count == 1 << 20)
            let transaction = try await RawHTTP.request("PUT", port: port, "/_matrix/app/v1/transactions/big", bearer: Self.token, body: large)
            #expect(transaction.status == 200)
            #expect(handler.events.map(\.eventID.rawValue) == ["$big"])
        }
    }

    @Test func twentyRefusalsFromOneSourceAreOneLogLine() async throws {
        let sink = LogSink.memory()
        try await withListener(sink: sink) { port in
            for index in 0..<20 {
                let response = try await RawHTTP.request("PUT", port: port, "/_matrix/app/v1/transactions/r\(index)", bearer: "wrong",
                                                         body: Data("{}".utf8))
                #expect(response.status == 403)
            }
        }
        let refusals = sink.records.filter { $0.message == "Request refused" }
        #expect(refusals.count == 1)
        #expect(refusals.first?.metadata["http.refusal.reason"] == "wrong_token")
        #expect(refusals.first?.metadata["http.client.address"] == "127.0.0.1")
        #expect(refusals.first?.metadata["http.refusals.suppressed"] == "0")
    }

    @Test func aStrangerTricklingItsHeadIsClosedAtItsDeadline() async throws {
        let configuration = AppServiceListener.Configuration(host: "127.0.0.1", port: 0, hsToken: Self.token,
                                                             unauthenticatedTimeout: .seconds(1))
        try await withListener(configuration) { port in
            let socket = try RawSocket.connect(port: port)
            let clock = ContinuousClock()
            let start = clock.now
            let head = Array(Self.head("GET", "/health").utf8)
            var closed = false
            // One byte every 200 ms keeps libmicrohttpd's idle timer happy; the listener's own deadline does not care.
            for byte in head.dropLast() {
                do { try socket.send([byte]) } catch { closed = true; break }
                if socket.receiveUntilClosed(timeout: .milliseconds(200)).closed { closed = true; break }
            }
            #expect(closed)
            #expect(clock.now - start < .seconds(4))
        }
    }
}
