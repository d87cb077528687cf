import Foundation
import IsthmusCommon
import Matrix
@testable import MatrixClient
import TestSupport
import Testing

/// ``CurlTransport`` and the client's retry rules against a plain-HTTP Python server that drops or ignores requests on
/// purpose: what libcurl retries by itself, what it must not, and how failures are classified.
@Suite struct CurlTransportTests {
    func server(_ mode: String) throws -> ScriptedPythonServer {
        try ScriptedPythonServer(script: PythonServerScripts.plainServer, arguments: [mode])
    }

    func client(_ server: ScriptedPythonServer, policy: RetryPolicy = RetryPolicy(maxAttempts: 1)) -> MatrixClient {
        MatrixClient(configuration: .init(homeserverURL: URL(string: "http://127.0.0.1:\(server.port)")!, accessToken: "t",
                                          requestTimeout: .seconds(10), retryPolicy: policy), logger: .disabled)
    }

    @Test func aGetOnAKeptAliveConnectionTheServerDroppedIsSentAgainOnANewOne() async throws {
        let server = try server("drop-reused")
        let client = client(server)
        _ = try await client.whoAmI()
        _ = try await client.whoAmI()   // on the kept-alive connection: dropped there, answered on a new one
        #expect(server.events().filter { !$0.hasPrefix("accept") }.map { $0.split(separator: " ").first! }
                    == ["answered", "dropped", "answered"], "\(server.events())")
    }

    @Test func aPostThatCreatesSomethingIsNeverSentTwice() async throws {
        let server = try server("drop-reused")
        let client = client(server)
        _ = try await client.whoAmI()   // leaves a kept-alive connection the server will drop the next request on
        let room = try await client.createRoom(CreateRoomRequest())
        #expect(room == RoomID("!new:localhost"))
        let posts = server.events().filter { $0.contains(" POST ") }
        #expect(posts.count == 1 && posts[0].hasPrefix("answered 2 "), "on a connection of its own, sent once: \(server.events())")
    }

    @Test func messagesTheClientNeverRepeatsStillShareOneKeptAliveConnection() async throws {
        // A message send is not repeated by the client (`.rateLimitOnly`), but it is a PUT with a transaction id, so
        // it may go on a kept-alive connection. (Each took a new connection before: a TCP — and on https:// a TLS —
        // handshake per bridged message.)
        let server = try server("keep")
        let client = client(server)
        for index in 0..<3 {
            _ = try await client.sendMessage(.text("hi"), to: RoomID("!r:localhost")!, transactionID: ClientTransactionID("t\(index)")!,
                                             retry: .rateLimitOnly)
        }
        let events = server.events()
        #expect(events.filter { $0.hasPrefix("accept ") } == ["accept 1"], "\(events)")
        #expect(events.filter { $0.hasPrefix("answered 1 PUT ") }.count == 3, "\(events)")
    }

    @Test func nothingListeningIsAConnectFailure() async throws {
        let port = try { () throws -> Int in
            let probe = try ScriptedPythonServer(script: PythonServerScripts.plainServer, arguments: ["keep"])
            return probe.port
        }()
        let transport = CurlTransport(maxConnections: 1, caFile: nil)
        do {
            _ = try await transport.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/", headers: [], timeout: .seconds(5)))
            Issue.record("a closed port answered")
        } catch {
            guard case .connectFailed = error else { Issue.record("\(error)"); return }
        }
    }

    @Test func aMalformedURLIsUnusable() async throws {
        let transport = CurlTransport(maxConnections: 1, caFile: nil)
        do {
            _ = try await transport.send(HTTPRequest(method: "GET", url: "http://[::1/", headers: [], timeout: .seconds(5)))
            Issue.record("a malformed URL was requested")
        } catch {
            guard case .unusable = error else { Issue.record("\(error)"); return }
        }
    }

    @Test func aSilentServerTimesOutAndCancellingAbortsAtOnce() async throws {
        let server = try server("silent")
        let transport = CurlTransport(maxConnections: 4, caFile: nil)
        let request = HTTPRequest(method: "GET", url: "http://127.0.0.1:\(server.port)/slow", headers: [], timeout: .milliseconds(300))
        do {
            _ = try await transport.send(request)
            Issue.record("a silent server answered")
        } catch {
            guard case .timedOut = error else { Issue.record("\(error)"); return }
        }

        var long = request
        long.timeout = .seconds(60)
        let call = Task { () async throws(TransportFailure) -> HTTPResponse in try await transport.send(long) }
        try await eventually("the request reached the server") { server.events("unanswered").count == 2 }
        call.cancel()
        let outcome = try await withDeadline("the cancelled request to end", seconds: 30) { await call.result }
        #expect(throws: TransportFailure.cancelled) { try outcome.get() }
    }

    @Test func retryAfterIsReadInAnyCaseAndOtherHeadersAreNot() async throws {
        let fake = try FakeHomeserver { request, _ in
            FakeHomeserver.json(429, "{}", headers: [request.path == "/upper" ? "RETRY-AFTER" : "Retry-After": " 7 ", "X-Other": "1"])
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await fake.run() }
            defer { fake.stop() }
            let transport = CurlTransport(maxConnections: 1, caFile: nil)
            for path in ["/mixed", "/upper"] {
                let response = try await transport.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(fake.port)\(path)", headers: [],
                                                                    timeout: .seconds(30)))
                #expect(response.status == 429 && response.headers == ["retry-after": "7"], "\(response.headers)")
            }
        }
    }

    @Test func requestsFromManyTasksAreAnsweredEachWithItsOwnAnswer() async throws {
        let server = try server("keep")
        let transport = CurlTransport(maxConnections: 8, caFile: nil)
        let paths = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<200 {
                group.addTask {
                    let response = try await transport.send(HTTPRequest(method: index.isMultiple(of: 2) ? "PUT" : "GET",
                                                                        url: "http://127.0.0.1:\(server.port)/n/\(index)", headers: [],
                                                                        body: index.isMultiple(of: 2) ? Data("{}".utf8) : nil,
                                                                        timeout: .seconds(10)))
                    return (index, response.status)
                }
            }
            return try await group.reduce(into: [Int: Int]()) { $0[$1.0] = $1.1 }
        }
        #expect(paths.count == 200 && paths.values.allSatisfy { $0 == 200 })
        #expect(Set(server.events("answered").map { $0.split(separator: " ")[3] }).count == 200)
        #expect(server.events("accept").count <= 8, "at most maxConnections: \(server.events("accept").count)")
    }
}
