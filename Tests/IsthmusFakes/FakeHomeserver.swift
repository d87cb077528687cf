import Foundation
import IsthmusCommon
import MatrixAppService
import Synchronization

/// A scriptable homeserver on loopback, built on the project's ``HTTPServer``: every request is answered by a closure.
/// Client tests record what was asked (``init(respond:)``); benchmarks answer as cheaply as possible without recording
/// (``init(answer:)``). ``run()`` serves until ``stop()``. Shared by the tests and `isthmus-bench`.
public final class FakeHomeserver: Sendable {
    /// A request as the fake saw it.
    public struct Recorded: Sendable {
        public var method: String
        /// Raw path, still percent-encoded.
        public var path: String
        /// Raw query as `name=value` strings.
        public var query: [String]
        public var authorization: String?
        public var body: Data
    }

    public let server: HTTPServer
    public var port: Int { server.port }
    public var url: URL { URL(string: "http://127.0.0.1:\(server.port)")! }
    private let log: RequestLog
    private let answer: @Sendable (HTTPServerRequest) -> HTTPServerResponse

    /// Records every request; `respond` gets it and its 1-based number.
    public convenience init(respond: @escaping @Sendable (Recorded, Int) -> HTTPServerResponse) throws {
        let log = RequestLog()
        try self.init(log: log) { request in
            let entry = Recorded(method: request.method, path: request.path,
                                 query: request.query.map { $0.name + ($0.value.map { "=" + $0 } ?? "") },
                                 authorization: request.headers["authorization"], body: request.body)
            return respond(entry, log.append(entry))
        }
    }

    /// Records nothing; `answer` gets each request as the server parsed it (the cheapest path, for benchmarks).
    public convenience init(answer: @escaping @Sendable (HTTPServerRequest) -> HTTPServerResponse) throws {
        try self.init(log: RequestLog(), answer: answer)
    }

    private init(log: RequestLog, answer: @escaping @Sendable (HTTPServerRequest) -> HTTPServerResponse) throws {
        server = try HTTPServer(configuration: .init(host: "127.0.0.1", port: 0), logger: .disabled)
        self.log = log
        self.answer = answer
    }

    /// What was asked so far (``init(respond:)`` only).
    public var requests: [Recorded] { log.all }

    /// The requests a recording fake saw, in order.
    private final class RequestLog: Sendable {
        private let entries = Mutex<[Recorded]>([])
        /// Appends and returns the request's 1-based number.
        func append(_ entry: Recorded) -> Int { entries.withLock { $0.append(entry); return $0.count } }
        var all: [Recorded] { entries.withLock { $0 } }
    }

    /// Serves until ``stop()``.
    public func run() async {
        for await request in server.requests {
            request.respond(answer(request))
        }
    }

    public func stop() {
        server.stopAccepting()
        server.close()
    }

    /// A JSON response from a literal.
    public static func json(_ status: Int, _ text: String, headers: [String: String] = [:]) -> HTTPServerResponse {
        HTTPServerResponse(status: status, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a }, body: Data(text.utf8))
    }
}
