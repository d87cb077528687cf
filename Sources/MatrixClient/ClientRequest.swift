import FoundationEssentials
import IsthmusCommon
import Matrix

/// One client-server API request before it is sent: the call's name, method, path (each parameter
/// percent-encoded as one segment), query, JSON body and retry mode. Pure value.
struct ClientRequest: Sendable {
    /// A path segment: fixed text, or a named parameter that is percent-encoded.
    enum Segment: ExpressibleByStringLiteral, Sendable {
        case literal(String)
        case parameter(String, String)

        init(stringLiteral value: String) { self = .literal(value) }

        static func param(_ name: String, _ value: some CustomStringConvertible) -> Segment {
            .parameter(name, value.description)
        }
    }

    var call: MatrixCall
    var method: String
    var segments: [Segment]
    var query: [(String, String)]
    var body: Data?
    var retry: RetryPolicy.Mode
    /// Whether to send the access token (false for endpoints that need none and would refuse a bad one).
    var authenticated = true
    /// This request's timeout instead of the client's (a long poll waits longer than any other call).
    var timeout: Duration?

    init(_ call: MatrixCall, _ method: String, _ segments: [Segment], query: [(String, String)] = [], body: Data? = nil,
         retry: RetryPolicy.Mode = .full) {
        self.call = call
        self.method = method
        self.segments = segments
        self.query = query
        self.body = body
        self.retry = retry
    }

    /// The encoded path and query, e.g. `/_matrix/client/v3/rooms/%21a%3Ab/send/m.room.message/t1?user_id=%40g%3Ab`.
    var pathAndQuery: String {
        var text = ""
        for segment in segments {
            switch segment {
            case .literal(let literal): text += "/" + literal
            case .parameter(_, let value): text += "/" + PercentEncoding.encode(value)
            }
        }
        if !query.isEmpty {
            text += "?" + query.map { PercentEncoding.encode($0.0) + "=" + PercentEncoding.encode($0.1) }.joined(separator: "&")
        }
        return text
    }

    /// Method and path template for errors and logs, e.g. `PUT /_matrix/client/v3/rooms/{roomId}/send/…`.
    var endpoint: String {
        method + " " + segments.map { segment in
            switch segment {
            case .literal(let literal): "/" + literal
            case .parameter(let name, _): "/{" + name + "}"
            }
        }.joined()
    }
}
