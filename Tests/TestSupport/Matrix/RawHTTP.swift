import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Plain HTTP requests for tests (e.g. replaying a transaction to the listener), on an ephemeral URLSession.
public enum RawHTTP {
    /// An answer: status, body, headers.
    public struct Response: Sendable {
        public var status: Int
        public var body: Data
        public var text: String { String(decoding: body, as: UTF8.self) }

        /// The `errcode` of a Matrix error body.
        public var errcode: String? {
            struct Body: Decodable { var errcode: String }
            return (try? JSONDecoder().decode(Body.self, from: body))?.errcode
        }
    }

    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 32
        return URLSession(configuration: configuration)
    }()

    /// Sends one request to `http://127.0.0.1:<port><pathAndQuery>`.
    public static func request(_ method: String, port: Int, _ pathAndQuery: String, bearer: String? = nil, body: Data? = nil,
                               timeout: TimeInterval = 10) async throws -> Response {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(pathAndQuery)")!)
        request.httpMethod = method
        request.timeoutInterval = timeout
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await session.data(for: request)
        return Response(status: (response as? HTTPURLResponse)?.statusCode ?? 0, body: data)
    }
}
