/// What the appservice listener needs to know about an HTTP request to route and authorise it. Pure value.
///
/// The path and query values are raw (still percent-encoded): the router decodes each segment itself so that
/// an encoded `/` inside a transaction id stays inside its segment.
public struct AppServiceRequest: Sendable, Equatable {
    public var method: String
    /// The raw path without the query, e.g. `/_matrix/app/v1/transactions/42`.
    public var path: String
    /// Raw query parameters in order (`value` nil for `?flag`).
    public var query: [QueryItem]
    /// The `Authorization` header, if any.
    public var authorization: String?
    /// Whether the body exceeded the listener's limit (it was discarded).
    public var bodyTooLarge: Bool

    public struct QueryItem: Sendable, Equatable {
        public var name: String
        public var value: String?
        public init(name: String, value: String?) {
            self.name = name
            self.value = value
        }
    }

    public init(method: String, path: String, query: [QueryItem] = [], authorization: String? = nil, bodyTooLarge: Bool = false) {
        self.method = method
        self.path = path
        self.query = query
        self.authorization = authorization
        self.bodyTooLarge = bodyTooLarge
    }
}
