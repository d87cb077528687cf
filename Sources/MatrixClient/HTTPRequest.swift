import Foundation

/// One HTTP request as ``CurlTransport`` sends it. Pure value.
struct HTTPRequest: Sendable {
    var method: String
    /// The whole URL, path and query already percent-encoded.
    var url: String
    var headers: [(String, String)]
    var body: Data?
    /// The deadline of the whole exchange (connecting included).
    var timeout: Duration
    /// False for a request that must not be sent twice (a POST that creates something): it gets a connection of its
    /// own, because libcurl silently sends a request again when a *reused* connection dies before any answer byte.
    var mayReuseConnection = true
}
