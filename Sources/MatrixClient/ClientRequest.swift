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
    /// A whole URL elsewhere than the homeserver (an OAuth 2.0 authorization server's endpoint), sent instead of the
    /// homeserver's base and ``segments``.
    var absoluteURL: String?
    /// The body is an HTML form (`application/x-www-form-urlencoded`, as OAuth 2.0's token endpoints take), not JSON.
    var form = false

    /// Whether the request may go on a kept-alive connection. On a reused connection that dies before any byte of
    /// the answer, libcurl sends the request once more on a new one (``CurlTransport`` says when). That is harmless
    /// for a call repeated in full anyway, and for GET, PUT and DELETE, which the server treats as the same request
    /// when repeated. A message send (a PUT with a transaction id that the client itself never repeats) is the case to
    /// weigh: it is stored twice only if the process that stored it died before answering *and* libcurl's immediate
    /// resend reached another live process that does not know the transaction id — a load balancer spreading one
    /// homeserver's `/send` over several processes (Synapse keeps an appservice's transaction ids in memory). A
    /// single homeserver process is still down at that moment and refuses the resend — and that refusal is not taken
    /// as proof that nothing was stored: ``MatrixClient`` leaves it to a caller that retries itself. Against that: a new
    /// connection per message is a TCP handshake, and a TLS one on `https://`, for every bridged message. A POST that
    /// must not run twice (create a room, log in, register an OAuth client) gets a connection of its own.
    var mayReuseConnection: Bool { retry == .full || method != "POST" }

    /// A form POST to `url` (an OAuth 2.0 endpoint): no access token, sent once (a lost answer is the caller's to handle).
    init(_ call: MatrixCall, formTo url: String, _ fields: [(String, String)]) {
        self.init(call, "POST", [], body: Data(Self.formEncoded(fields).utf8), retry: .rateLimitOnly)
        absoluteURL = url
        form = true
        authenticated = false
    }

    /// `application/x-www-form-urlencoded` (the WHATWG URL standard's serializer: space as `+`, every byte but
    /// `*-._` and ASCII alphanumerics percent-encoded).
    static func formEncoded(_ fields: [(String, String)]) -> String {
        fields.map { formComponent($0.0) + "=" + formComponent($0.1) }.joined(separator: "&")
    }

    private static func formComponent(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                out += "+"
            default:
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return out
    }

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

    /// Method and path template for errors and logs, e.g. `PUT /_matrix/client/v3/rooms/{roomId}/send/…`; for an
    /// absolute URL, the URL without its query.
    var endpoint: String {
        if let absoluteURL { return method + " " + (absoluteURL.split(separator: "?", maxSplits: 1).first.map(String.init) ?? absoluteURL) }
        return method + " " + segments.map { segment in
            switch segment {
            case .literal(let literal): "/" + literal
            case .parameter(let name, _): "/{" + name + "}"
            }
        }.joined()
    }
}
