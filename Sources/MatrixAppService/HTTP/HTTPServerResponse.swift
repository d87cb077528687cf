import FoundationEssentials
import Matrix

/// An HTTP response for ``HTTPServerRequest/respond(_:)``. Pure value.
public struct HTTPServerResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data
    /// A body produced while it is sent (``body`` is then ignored); its length, when known, becomes `Content-Length`.
    public var stream: HTTPStreamingBody?

    public init(status: Int, headers: [String: String] = [:], body: Data = Data(), stream: HTTPStreamingBody? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.stream = stream
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

extension HTTPServerResponse {
    /// This response with `Connection: close` (libmicrohttpd closes the connection once it is sent).
    var closingConnection: HTTPServerResponse {
        var copy = self
        copy.headers["Connection"] = "close"
        return copy
    }
}
