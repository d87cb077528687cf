import Foundation
import Matrix

/// One HTTP request received by ``HTTPServer``, waiting for its answer. A value; answering does no blocking I/O.
///
/// The connection stays suspended until ``respond(_:)`` is called (once; later calls are ignored). A request
/// dropped without an answer is answered 503, so a connection is never left hanging.
public struct HTTPServerRequest: Sendable {
    /// `GET`, `PUT` …
    public let method: String
    /// The raw path, still percent-encoded, without the query.
    public let path: String
    /// Raw query parameters in order.
    public let query: [AppServiceRequest.QueryItem]
    /// Request headers by lower-case name (the last value wins for repeated headers).
    public let headers: [String: String]
    /// The body (empty when it exceeded the limit).
    public let body: Data
    /// Whether the body exceeded the server's limit and was discarded.
    public let bodyTooLarge: Bool
    let responder: HTTPResponder

    /// Sends `response` and lets the connection go on (keep-alive). Thread-safe; the first call wins.
    public func respond(_ response: HTTPServerResponse) {
        responder.respond(response)
    }
}

/// An HTTP response for ``HTTPServerRequest/respond(_:)``. Pure value.
public struct HTTPServerResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response (`Content-Type: application/json`) with `body` encoded by `JSONEncoder`.
    public static func json(_ status: Int, _ body: some Encodable) -> HTTPServerResponse {
        let data = (try? JSONEncoder().encode(body)) ?? Data("{}".utf8)
        return HTTPServerResponse(status: status, headers: ["Content-Type": "application/json"], body: data)
    }

    /// A Matrix error (`{"errcode", "error"}`) with its HTTP status.
    public static func matrixError(_ rejection: AppServiceRejection) -> HTTPServerResponse {
        json(rejection.status, rejection.body)
    }

    /// 503 `M_UNKNOWN`: the server is shutting down or the request was dropped unanswered.
    static let unavailable = matrixError(AppServiceRejection(status: 503, errcode: MatrixErrorCode.unknown, message: "Service unavailable"))
}
