import FoundationEssentials
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
    /// The whole body (never above the limit its admission set: larger ones are refused by the server).
    public let body: Data
    let responder: HTTPResponder

    /// Sends `response` and lets the connection go on (keep-alive). Thread-safe; the first call wins.
    public func respond(_ response: HTTPServerResponse) {
        responder.respond(response)
    }
}
