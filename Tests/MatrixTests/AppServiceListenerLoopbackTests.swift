import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixAppService
import TestSupport
import Synchronization
import Testing

/// The listener over a real loopback socket with a scripted handler: exactly-once, ordering, refusals, limits.
@Suite struct AppServiceListenerLoopbackTests {
    static let token = "hs-secret"

    /// Runs `body` with a listener on a free port over a store at `storePath` (in memory when nil).
    func withListener(handler: RecordingAppServiceHandler, storePath: String = ":memory:", maxBodyBytes: Int = 16 << 20,
                      _ body: (Int) async throws -> Void) async throws {
        let store = try Store(path: storePath, logger: .disabled)
        handler.use(store)
        let listener = try AppServiceListener(configuration: .init(host: "127.0.0.1", port: 0, hsToken: Self.token, maxBodyBytes: maxBodyBytes),
                                              handler: handler, logger: .disabled)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await listener.run() }
            defer { listener.shutdown() }
            try await body(listener.port)
        }
    }

    static func transactionBody(_ eventIDs: [String]) -> Data {
        let events = eventIDs.map {
            #"{"type": "m.room.message", "event_id": "\#($0)", "room_id": "!r", "sender": "@a:localhost", "origin_server_ts": 1, "content": {"msgtype": "m.text", "body": "x"}}"#
        }
        return Data(#"{"events": [\#(events.joined(separator: ","))]}"#.utf8)
    }

    func put(_ port: Int, _ txn: String, _ body: Data) async throws -> RawHTTP.Response {
        try await RawHTTP.request("PUT", port: port, "/_matrix/app/v1/transactions/" + PercentEncoding.encode(txn), bearer: Self.token, body: body)
    }

    @Test func aRepeatIsAcknowledgedWithoutTheHandlerAlsoAfterReopeningTheStore() async throws {
        let handler = RecordingAppServiceHandler()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("isthmus-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        try await withListener(handler: handler, storePath: path) { port in
            let response1 = try await put(port, "a/b:1", Self.transactionBody(["$1"]))
            #expect(response1.status == 200)
            let response2 = try await put(port, "a/b:1", Self.transactionBody(["$1"]))
            #expect(response2.status == 200)
        }
        try await withListener(handler: handler, storePath: path) { port in
            let response3 = try await put(port, "a/b:1", Self.transactionBody(["$1"]))
            #expect(response3.status == 200)
        }
        #expect(handler.transactions.map(\.id.rawValue) == ["a/b:1"])
    }

    /// Found by scripts/chaos (seed 2026): Synapse on SQLite handed out transaction ids again after a restart; the
    /// reused id carried new messages, which were acknowledged and dropped.
    @Test func aKnownIDWithMessagesNeverSeenIsProcessedAndATrueRepeatIsNot() async throws {
        let handler = RecordingAppServiceHandler()
        try await withListener(handler: handler) { port in
            let first = try await put(port, "66", Self.transactionBody(["$1"]))
            let retry = try await put(port, "66", Self.transactionBody(["$1"]))   // the homeserver's retry
            let reused = try await put(port, "66", Self.transactionBody(["$2"]))  // the id handed out again
            #expect(first.status == 200 && retry.status == 200 && reused.status == 200)
        }
        #expect(handler.transactions.map { $0.events.map(\.eventID.rawValue) } == [["$1"], ["$2"]])
    }

    @Test func aHandlerFailureIsA500AndTheRetryIsProcessed() async throws {
        let handler = RecordingAppServiceHandler()
        handler.failNext(1)
        try await withListener(handler: handler) { port in
            let failed = try await put(port, "7", Self.transactionBody(["$1"]))
            #expect(failed.status == 500 && failed.errcode == "M_UNKNOWN")
            let response4 = try await put(port, "7", Self.transactionBody(["$1"]))
            #expect(response4.status == 200)
            let response5 = try await put(port, "7", Self.transactionBody(["$1"]))
            #expect(response5.status == 200)
        }
        #expect(handler.transactions.map(\.id.rawValue) == ["7"])
    }

    @Test func concurrentRequestsRunTheHandlerOnceAtATimeAndOncePerID() async throws {
        let handler = RecordingAppServiceHandler()
        handler.holdTransactions()
        try await withListener(handler: handler) { port in
            // The first transaction is held in the handler while the other 39 are sent in full: they are all at the
            // listener at once, so what the handler saw below is the listener's doing, not the order they came in.
            let first = try RawSocket.connect(port: port)
            try first.send(Self.rawPut("txn-0", Self.transactionBody(["$0"])))
            try await eventually("the first transaction to be in the handler", timeout: 30) { handler.transactionsInHandler == 1 }
            var sockets = [first]
            for index in 1..<40 {
                let socket = try RawSocket.connect(port: port)
                try socket.send(Self.rawPut("txn-\(index % 10)", Self.transactionBody(["$\(index % 10)"])))
                sockets.append(socket)
            }
            #expect(handler.transactionsInHandler == 1)
            handler.releaseTransactions()
            for socket in sockets {
                let answer = await socket.receiveUntilClosed(timeout: .seconds(30))
                #expect(answer.status == 200, "\(answer.text)")
            }
        }
        #expect(handler.transactions.count == 10)
        #expect(Set(handler.transactions.map(\.id.rawValue)).count == 10)
        #expect(handler.maxConcurrentTransactions == 1)
    }

    /// A whole `PUT /transactions/{txn}` request, for a ``RawSocket``; the listener closes the connection after answering.
    static func rawPut(_ txn: String, _ body: Data) -> [UInt8] {
        let head = "PUT /_matrix/app/v1/transactions/\(PercentEncoding.encode(txn)) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + "Authorization: Bearer \(token)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n"
            + "Connection: close\r\n\r\n"
        return Array(head.utf8) + Array(body)
    }

    @Test func transactionsSentInOrderAreHandledInOrder() async throws {
        let handler = RecordingAppServiceHandler()
        try await withListener(handler: handler) { port in
            for index in 0..<200 {
                let response6 = try await put(port, "\(index)", Self.transactionBody(["$\(index)a", "$\(index)b"]))
                #expect(response6.status == 200)
            }
        }
        #expect(handler.events.map(\.eventID.rawValue) == (0..<200).flatMap { ["$\($0)a", "$\($0)b"] })
    }

    @Test func refusalsAreMatrixJSONAndTheListenerKeepsServing() async throws {
        let handler = RecordingAppServiceHandler(knownUsers: [UserID("@_xmpp_a:localhost")!], knownAliases: [RoomAlias("#_xmpp_r:localhost")!])
        try await withListener(handler: handler, maxBodyBytes: 1 << 20) { port in
            let body = Self.transactionBody([])
            let missing = try await RawHTTP.request("PUT", port: port, "/transactions/1", body: body)
            #expect(missing.status == 401 && missing.errcode == "M_UNAUTHORIZED")
            let wrong = try await RawHTTP.request("PUT", port: port, "/transactions/1", bearer: "nope", body: body)
            #expect(wrong.status == 403 && wrong.errcode == "M_FORBIDDEN")
            let large = try await put(port, "big", Data(repeating: 0x20, count: 2 << 20))
            #expect(large.status == 413 && large.errcode == "M_TOO_LARGE")
            let notJSON = try await put(port, "nj", Data("{".utf8))
            #expect(notJSON.status == 400 && notJSON.errcode == "M_NOT_JSON")
            let badJSON = try await put(port, "bj", Data("[]".utf8))
            #expect(badJSON.status == 400 && badJSON.errcode == "M_BAD_JSON")
            let unknown = try await RawHTTP.request("GET", port: port, "/what", bearer: Self.token)
            #expect(unknown.status == 404 && unknown.errcode == "M_UNRECOGNIZED")
            let method = try await RawHTTP.request("DELETE", port: port, "/_matrix/app/v1/transactions/1", bearer: Self.token)
            #expect(method.status == 405 && method.errcode == "M_UNRECOGNIZED")
            let response7 = try await RawHTTP.request("GET", port: port, "/_isthmus/health")
            #expect(response7.status == 200)
            let response8 = try await RawHTTP.request("GET", port: port, "/_matrix/app/v1/users/%40_xmpp_a%3Alocalhost", bearer: Self.token)
            #expect(response8.status == 200)
            let noUser = try await RawHTTP.request("GET", port: port, "/_matrix/app/v1/users/%40_xmpp_b%3Alocalhost", bearer: Self.token)
            #expect(noUser.status == 404)
            let response9 = try await RawHTTP.request("GET", port: port, "/_matrix/app/v1/rooms/%23_xmpp_r%3Alocalhost", bearer: Self.token)
            #expect(response9.status == 200)
            let response10 = try await RawHTTP.request("POST", port: port, "/_matrix/app/v1/ping", bearer: Self.token, body: Data(#"{"transaction_id":"p1"}"#.utf8))
            #expect(response10.status == 200)
            let response11 = try await put(port, "ok", Self.transactionBody(["$ok"]))
            #expect(response11.status == 200)
        }
        #expect(handler.pings == ["p1"])
        #expect(handler.events.map(\.eventID.rawValue) == ["$ok"])
    }

    @Test func aQueryIsAnsweredWhileATransactionIsInTheHandler() async throws {
        let handler = RecordingAppServiceHandler(knownUsers: [UserID("@_xmpp_a:localhost")!])
        handler.holdTransactions()
        try await withListener(handler: handler) { port in
            // Its answer is kept as soon as it comes: a request that ends before reaching the handler (seen once in a
            // loaded CI-like run) is reported with what ended it, not as a plain wait that timed out.
            let ended = Mutex<String?>(nil)
            async let slow = { () async throws -> RawHTTP.Response in
                do {
                    let response = try await put(port, "slow", Self.transactionBody(["$s"]))
                    ended.withLock { $0 = "answered \(response.status) \(response.text)" }
                    return response
                } catch {
                    ended.withLock { $0 = "failed: \(error)" }
                    throw error
                }
            }()
            do {
                try await eventually("the transaction to be in the handler", timeout: 30) {
                    if handler.transactionsInHandler == 1 { return true }
                    if let ended = ended.withLock({ $0 }) { throw TestFailure("the transaction never reached the handler: \(ended)") }
                    return false
                }
                // Answered while the transaction is held in the handler (it stays there until released below).
                let response12 = try await withDeadline("a query answered while a transaction is in the handler", seconds: 30) {
                    try await RawHTTP.request("GET", port: port, "/users/%40_xmpp_a%3Alocalhost", bearer: Self.token)
                }
                #expect(response12.status == 200)
                #expect(handler.transactionsInHandler == 1)
            } catch {
                handler.releaseTransactions()
                throw error
            }
            handler.releaseTransactions()
            let response13 = try await slow
            #expect(response13.status == 200)
        }
    }

    @Test func aBusyPortIsReportedAsInUse() throws {
        let first = try AppServiceListener(configuration: .init(host: "127.0.0.1", port: 0, hsToken: "t"),
                                           handler: RecordingAppServiceHandler(), logger: .disabled)
        #expect(throws: HTTPServerError.self) {
            _ = try AppServiceListener(configuration: .init(host: "127.0.0.1", port: first.port, hsToken: "t"),
                                       handler: RecordingAppServiceHandler(), logger: .disabled)
        }
        do {
            _ = try AppServiceListener(configuration: .init(host: "127.0.0.1", port: first.port, hsToken: "t"),
                                       handler: RecordingAppServiceHandler(), logger: .disabled)
        } catch {
            #expect(error.isAddressInUse)
        }
    }
}
