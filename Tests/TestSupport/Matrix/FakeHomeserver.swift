import Foundation
import IsthmusCommon
import MatrixAppService
import Synchronization

/// A scriptable homeserver on loopback for client tests, built on ``HTTPServer``: every request is recorded and
/// answered by `respond`. ``run()`` serves until ``stop()``.
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
    private let recorded = Mutex<[Recorded]>([])
    private let respond: @Sendable (Recorded, Int) -> HTTPServerResponse

    /// `respond` gets each request and its 1-based number.
    public init(respond: @escaping @Sendable (Recorded, Int) -> HTTPServerResponse) throws {
        server = try HTTPServer(configuration: .init(host: "127.0.0.1", port: 0), logger: .disabled)
        self.respond = respond
    }

    public var requests: [Recorded] { recorded.withLock { $0 } }

    /// Serves until ``stop()``.
    public func run() async {
        for await request in server.requests {
            let entry = Recorded(method: request.method, path: request.path,
                                 query: request.query.map { $0.name + ($0.value.map { "=" + $0 } ?? "") },
                                 authorization: request.headers["authorization"], body: request.body)
            let number = recorded.withLock { $0.append(entry); return $0.count }
            request.respond(respond(entry, number))
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
