import Matrix

/// A request as ``HTTPServer`` sees it when its headers have arrived and before any byte of its body is read:
/// what an ``HTTPServer/Configuration/admission`` decides on. Pure value.
public struct HTTPRequestHead: Sendable, Equatable {
    /// `GET`, `PUT` …
    public var method: String
    /// The raw path, still percent-encoded, without the query.
    public var path: String
    /// Raw query parameters in order.
    public var query: [AppServiceRequest.QueryItem]
    /// Request headers by lower-case name (the last value wins for repeated headers).
    public var headers: [String: String]
    /// The peer's IP address as text (`127.0.0.1`, `::1`), or `unknown`.
    public var remoteAddress: String

    public init(method: String, path: String, query: [AppServiceRequest.QueryItem] = [], headers: [String: String] = [:],
                remoteAddress: String = "unknown") {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.remoteAddress = remoteAddress
    }
}
