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
        handler.use(store)
        let logger = Logger(label: "matrix.appservice", level: .info, sink: sink)
        let listener = try AppServiceListener(configuration: configuration, handler: handler, logger: logger)
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

    /// No token for even requests, a wrong one for odd ones.
    static func bearer(_ index: Int) -> String? { index.isMultiple(of: 2) ? nil : "wrong-token" }

    /// This process's resident memory (`VmRSS` of /proc/self/status), in bytes, after giving free heap memory
    /// back (so that what was allocated and freed meanwhile does not count).
    static func residentBytes() throws -> Int {
        MemoryTrim.releaseFreeMemory()
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ")[1]) else { throw CocoaError(.fileReadCorruptFile) }
        return kilobytes * 1024
    }

    @Test func aWrongOrMissingTokenIsRefusedBeforeTheBodyAndCostsNoMemory() async throws {
        let bodySize = 16 << 20
        let firstMegabyte = [UInt8](repeating: 0x20, count: 1 << 20)  // resident before any measurement
        try await withListener { port in
            // Blocking socket calls run on their own thread, never on the cooperative pool the listener needs
            // (expectations are checked back here, where the test's context is). Fifty requests in ten rounds of
            // five, resident memory read around each round: other suites run in this process meanwhile and move
            // it by tens of MiB at times, but not in every round.
            let (held, answers, growths) = try await onOwnThread { () throws -> ([RawSocket], [RawSocket.Received], [Int]) in
                var held: [RawSocket] = []
                var answers: [RawSocket.Received] = []
                var growths: [Int] = []
                for round in 0..<10 {
                    let before = try Self.residentBytes()
                    for index in round * 5..<round * 5 + 5 {
                        let socket = try RawSocket.connect(port: port)
                        try socket.send(Self.head("PUT", "/_matrix/app/v1/transactions/t\(index)", bearer: Self.bearer(index),
                                                  extra: ["Content-Length: \(bodySize)"]))
                        // Only the head went out: the whole body is still to send, and the answer must already be there.
                        let answer = socket.receiveUntilClosed(timeout: .seconds(5))
                        answers.append(answer)
                        guard answer.status != nil else { return (held, answers, growths) }
                        // Sending the body now goes nowhere (the peer is gone); it must not land in the bridge's memory.
                        try? socket.send(firstMegabyte, timeout: .seconds(2))
                        held.append(socket)
                    }
                    growths.append(try Self.residentBytes() - before)
                }
                return (held, answers, growths)
            }
            #expect(answers.count == 50)
            for (index, answer) in answers.enumerated() {
                #expect(answer.status == (Self.bearer(index) == nil ? 401 : 403), "answered before the body was sent")
                #expect(answer.errcode == (Self.bearer(index) == nil ? "M_UNAUTHORIZED" : "M_FORBIDDEN"))
                #expect(answer.closed, "the listener closes the connection after refusing")
                #expect(answer.text.lowercased().contains("connection: close"))
            }
            // A listener that read these bodies would grow by 5 × 16 MiB in every round.
            let quietest = try #require(growths.min())
            #expect(quietest < 2 << 20, "resident memory grew by \(growths) bytes in rounds of five refused 16 MiB requests")
            withExtendedLifetime(held) {}
        }
    }

    @Test func fiveHundredIdleStrangersDoNotStopTheHomeserversTransaction() async throws {
        let handler = RecordingAppServiceHandler()
        // A long deadline for strangers: within this test only the connection limits can close them.
        let configuration = AppServiceListener.Configuration(host: "127.0.0.1", port: 0, hsToken: Self.token,
                                                             unauthenticatedTimeout: .seconds(60))
        try await withListener(configuration, handler: handler) { port in
            let strangers = try await onOwnThread { () throws -> [RawSocket] in
                var strangers: [RawSocket] = []
                for index in 0..<500 {
                    let socket = try RawSocket.connect(port: port, waitUpTo: nil)
                    if index.isMultiple(of: 2) {  // half send a head they never finish
                        try? socket.send("PUT /_matrix/app/v1/transactions/x\(index) HTTP/1.1\r\nHost: 127.0.0.1\r\n", timeout: .milliseconds(100))
                    }
                    strangers.append(socket)
                }
                return strangers
            }
            let response = try await withDeadline("the homeserver's transaction", seconds: 30) {
                try await RawHTTP.request("PUT", port: port, "/_matrix/app/v1/transactions/hs-1", bearer: Self.token,
                                          body: AppServiceListenerLoopbackTests.transactionBody(["$from-hs"]), timeout: 30)
            }
            #expect(response.status == 200)
            #expect(handler.events.map(\.eventID.rawValue) == ["$from-hs"])
            // And the listener keeps no more than its 64 connections of them.
            try await eventually("the listener to keep at most 64 of the 500 strangers", timeout: 30) {
                strangers.count { !$0.receiveUntilClosed(timeout: .zero).closed } <= 64
            }
        }
    }

    @Test func eachRouteHasItsOwnBodyLimit() async throws {
        let handler = RecordingAppServiceHandler()
        try await withListener(handler: handler) { port in
            let (refused, chunkedAnswer, probeAnswer) = try await onOwnThread { () throws -> (RawSocket.Received, RawSocket.Received, RawSocket.Received) in
                // Declared too large for a ping: 413 on the head alone.
                let declared = try RawSocket.connect(port: port)
                try declared.send(Self.head("POST", "/_matrix/app/v1/ping", bearer: Self.token, extra: ["Content-Length: \(100 << 10)"]))
                let refused = declared.receiveUntilClosed()

                // Chunked past the limit: 413 once the body has ended.
                let chunked = try RawSocket.connect(port: port)
                try chunked.send(Self.head("POST", "/_matrix/app/v1/ping", bearer: Self.token, extra: ["Transfer-Encoding: chunked"]))
                let chunk = String(repeating: "x", count: 10 << 10)
                for _ in 0..<10 { try chunked.send(String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n") }
                try chunked.send("0\r\n\r\n")
                let chunkedAnswer = chunked.receiveUntilClosed()

                // The health probe takes no body at all.
                let probe = try RawSocket.connect(port: port)
                try probe.send(Self.head("GET", "/health", extra: ["Content-Length: 10"]))
                return (refused, chunkedAnswer, probe.receiveUntilClosed())
            }
            #expect(refused.status == 413 && refused.errcode == "M_TOO_LARGE" && refused.closed)
            #expect(chunkedAnswer.status == 413 && chunkedAnswer.errcode == "M_TOO_LARGE")
            #expect(probeAnswer.status == 413)
            #expect(handler.pings.isEmpty)

            // A ping within its limit, and a 1 MiB transaction, are served.
            let ping = try await RawHTTP.request("POST", port: port, "/_matrix/app/v1/ping", bearer: Self.token,
                                                 body: Data(#"{"transaction_id":"p"}"#.utf8))
            #expect(ping.status == 200)
            var large = AppServiceListenerLoopbackTests.transactionBody(["$big"])
            large.append(Data(repeating: 0x20, count: (1 << 20) - large.count))
            #expect(large.count == 1 << 20)
            let transaction = try await RawHTTP.request("PUT", port: port, "/_matrix/app/v1/transactions/big", bearer: Self.token, body: large)
            #expect(transaction.status == 200)
            // The legacy query token works as well as the header.
            let legacy = try await RawHTTP.request("PUT", port: port, "/transactions/legacy?access_token=\(Self.token)",
                                                   body: AppServiceListenerLoopbackTests.transactionBody(["$legacy"]))
            #expect(legacy.status == 200)
            #expect(handler.events.map(\.eventID.rawValue) == ["$big", "$legacy"])
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
            let (closed, elapsed) = try await onOwnThread { () throws -> (Bool, Duration) in
                let socket = try RawSocket.connect(port: port)
                let clock = ContinuousClock()
                let start = clock.now
                let head = Array(Self.head("GET", "/health", extra: ["X-Padding: " + String(repeating: "p", count: 200)]).utf8)
                // One byte every 200 ms keeps libmicrohttpd's idle timer happy (the whole head would take ~50 s);
                // the listener's own deadline does not care.
                for byte in head.dropLast() {
                    do { try socket.send([byte]) } catch { return (true, clock.now - start) }
                    if socket.receiveUntilClosed(timeout: .milliseconds(200)).closed { return (true, clock.now - start) }
                }
                return (false, clock.now - start)
            }
            #expect(closed)
            #expect(elapsed < .seconds(8))
        }
    }

    @Test func aBodyDrippedPastTheRequestTimeoutIsCutOff() async throws {
        let handler = RecordingAppServiceHandler()
        let configuration = AppServiceListener.Configuration(host: "127.0.0.1", port: 0, hsToken: Self.token, requestTimeout: .seconds(1))
        try await withListener(configuration, handler: handler) { port in
            let (closed, elapsed) = try await onOwnThread { () throws -> (Bool, Duration) in
                let socket = try RawSocket.connect(port: port)
                let clock = ContinuousClock()
                let start = clock.now
                try socket.send(Self.head("PUT", "/_matrix/app/v1/transactions/slow", bearer: Self.token, extra: ["Content-Length: 100"]))
                // Even with the token, a body must not take forever: one byte every 200 ms would need 20 s.
                for _ in 0..<100 {
                    do { try socket.send([0x20]) } catch { return (true, clock.now - start) }
                    if socket.receiveUntilClosed(timeout: .milliseconds(200)).closed { return (true, clock.now - start) }
                }
                return (false, clock.now - start)
            }
            #expect(closed)
            #expect(elapsed < .seconds(5))
            #expect(handler.transactions.isEmpty)
        }
    }
}
