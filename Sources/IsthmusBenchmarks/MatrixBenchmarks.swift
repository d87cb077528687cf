import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixAppService
import MatrixClient

/// `isthmus-bench appservice [--transactions N] [--calls N]`: transactions/s accepted by the appservice listener
/// (over loopback HTTP, SQLite store on disk, a handler that does nothing) and client calls/s to a fake homeserver
/// built on the same HTTP server. Prints figures; asserts nothing.
enum MatrixBenchmarks {
    static func run(_ arguments: [String]) async throws {
        let transactions = option("--transactions", in: arguments) ?? 4000
        let calls = option("--calls", in: arguments) ?? 4000
        for concurrency in [1, 16] {
            let rate = try await listenerRate(transactions: transactions, concurrency: concurrency)
            print("appservice listener: \(transactions) transactions (5 events, \(transactionBody(0).count) bytes each), "
                  + "\(concurrency) in flight: \(Int(rate)) transactions/s")
        }
        for concurrency in [1, 16] {
            let rate = try await clientRate(calls: calls, concurrency: concurrency)
            print("client sendMessage to a loopback fake homeserver: \(calls) calls, \(concurrency) in flight: \(Int(rate)) calls/s")
        }
        fflush(nil)
    }

    private static func option(_ name: String, in arguments: [String]) -> Int? {
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
        return Int(arguments[index + 1])
    }

    /// A handler that keeps nothing: it only records each transaction as processed, as the contract requires.
    private struct NullHandler: AppServiceHandler {
        let store: Store
        func handle(_ transaction: Transaction) async throws { try await store.markTransactionProcessed(transaction.id) }
        func isProcessed(_ id: TransactionID) async throws -> Bool { try await store.isTransactionProcessed(id) }
        func seenMessages(_ events: [EventID], in room: RoomID) async throws -> Set<EventID> {
            try await store.seenMatrixEvents(room, among: events)
        }
        func userExists(_ user: UserID) async -> Bool { false }
        func roomAliasExists(_ alias: RoomAlias) async -> Bool { false }
    }

    private static func transactionBody(_ index: Int) -> Data {
        let events = (0..<5).map { n in
            #"{"type": "m.room.message", "event_id": "$ev\#(index)_\#(n)", "room_id": "!benchroom", "sender": "@alice:localhost", "origin_server_ts": 1700000000000, "unsigned": {"age": 42}, "content": {"msgtype": "m.text", "body": "Benchmark message number \#(index) part \#(n) with some text to make it realistic", "format": "org.matrix.custom.html", "formatted_body": "<p>Benchmark message <b>\#(index)</b></p>", "m.mentions": {}}}"#
        }
        return Data(#"{"events": [\#(events.joined(separator: ","))], "ephemeral": []}"#.utf8)
    }

    private static func listenerRate(transactions: Int, concurrency: Int) async throws -> Double {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("isthmus-bench-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try Store(path: path, logger: .disabled)
        let listener = try AppServiceListener(configuration: .init(host: "127.0.0.1", port: 0, hsToken: "bench"),
                                              handler: NullHandler(store: store), logger: .disabled)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 64
        let session = URLSession(configuration: configuration)
        let bodies = (0..<transactions).map(transactionBody)
        let base = "http://127.0.0.1:\(listener.port)/_matrix/app/v1/transactions/"
        return try await withThrowingTaskGroup(of: Double.self) { outer in
            outer.addTask { await listener.run(); return 0 }
            defer { listener.shutdown() }
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<concurrency {
                    group.addTask {
                        for index in stride(from: worker, to: transactions, by: concurrency) {
                            var request = URLRequest(url: URL(string: base + "bench\(index)")!)
                            request.httpMethod = "PUT"
                            request.httpBody = bodies[index]
                            request.setValue("Bearer bench", forHTTPHeaderField: "Authorization")
                            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                            let (_, response) = try await session.data(for: request)
                            guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw BenchmarkFailure(what: "transaction \(index)") }
                        }
                    }
                }
                try await group.waitForAll()
            }
            return Double(transactions) / seconds(ContinuousClock.now - start)
        }
    }

    private static func clientRate(calls: Int, concurrency: Int) async throws -> Double {
        let server = try HTTPServer(configuration: .init(host: "127.0.0.1", port: 0), logger: .disabled)
        let answer = HTTPServerResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(#"{"event_id": "$benchevent"}"#.utf8))
        let client = MatrixClient(configuration: .init(homeserverURL: URL(string: "http://127.0.0.1:\(server.port)")!, accessToken: "bench"),
                                  logger: .disabled)
        let room = RoomID("!benchroom")!, ghost = UserID("@_xmpp_bench:localhost")!
        return try await withThrowingTaskGroup(of: Double.self) { outer in
            outer.addTask {
                for await request in server.requests { request.respond(answer) }
                return 0
            }
            defer { server.stopAccepting(); server.close() }
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<concurrency {
                    group.addTask {
                        for index in stride(from: worker, to: calls, by: concurrency) {
                            _ = try await client.sendMessage(.text("message \(index)"), to: room,
                                                             transactionID: .derived(fromSourceKey: "bench \(index)"), as: ghost)
                        }
                    }
                }
                try await group.waitForAll()
            }
            return Double(calls) / seconds(ContinuousClock.now - start)
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private struct BenchmarkFailure: Error { var what: String }
}
