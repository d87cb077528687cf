import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import IsthmusCommon
import Matrix

/// The Matrix client-server API as the appservice uses it: `Authorization: Bearer <as_token>`, acting as any of its
/// ghosts with `?user_id=` (appservice API §2.4 "Client-Server API extensions"). Also works with an ordinary
/// user's access token (tests, relay mode). Thread-safe; every call does network I/O: over ``HTTP1Client``'s
/// keep-alive connections for an `http://` homeserver, on URLSession otherwise (`https://`).
///
/// Every call has a timeout per attempt; rate limits are waited out and network failures and 5xx retried per
/// ``RetryPolicy``; failures throw ``MatrixError`` naming the call and endpoint.
public final class MatrixClient: Sendable {
    /// Where the homeserver is and how to talk to it.
    public struct Configuration: Sendable {
        /// Base URL of the client-server API, e.g. `http://127.0.0.1:8008`.
        public var homeserverURL: URL
        /// The as_token (or a user's access token; empty for no `Authorization`).
        public var accessToken: String
        /// Timeout of one attempt.
        public var requestTimeout: Duration
        public var retryPolicy: RetryPolicy
        /// Connections to the homeserver at most (URLSession's default of 6 per host throttles many ghosts at once).
        public var maxConnectionsPerHost: Int

        public init(homeserverURL: URL, accessToken: String, requestTimeout: Duration = .seconds(30),
                    retryPolicy: RetryPolicy = RetryPolicy(), maxConnectionsPerHost: Int = 32) {
            self.homeserverURL = homeserverURL
            self.accessToken = accessToken
            self.requestTimeout = requestTimeout
            self.retryPolicy = retryPolicy
            self.maxConnectionsPerHost = maxConnectionsPerHost
        }
    }

    public let configuration: Configuration
    private let session: URLSession
    /// For an `http://` homeserver: requests go over ``HTTP1Client`` instead of URLSession (see there why).
    private let plainHTTP: HTTP1Client?
    /// The homeserver URL's path (requests' targets start with it), for ``plainHTTP``.
    private let basePath: String
    private let baseURL: String
    private let logger: Logger

    /// Creates the client and its URLSession. No I/O until the first call.
    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        var base = configuration.homeserverURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        baseURL = base
        let sessionConfiguration = URLSessionConfiguration.default
        sessionConfiguration.httpMaximumConnectionsPerHost = configuration.maxConnectionsPerHost
        sessionConfiguration.timeoutIntervalForRequest = Self.seconds(configuration.requestTimeout)
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.urlCache = nil
        sessionConfiguration.httpCookieStorage = nil
        session = URLSession(configuration: sessionConfiguration)
        let url = configuration.homeserverURL
        if url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty, url.user == nil {
            plainHTTP = HTTP1Client(host: host, port: url.port ?? 80, maxConnections: configuration.maxConnectionsPerHost)
        } else {
            plainHTTP = nil
        }
        var path = url.path
        while path.hasSuffix("/") { path.removeLast() }
        basePath = path
    }

    deinit { session.finishTasksAndInvalidate() }

    /// Sends `request` and decodes a 2xx body as `Response`, retrying per the policy.
    func perform<Response: Decodable>(_ request: ClientRequest, as _: Response.Type = Response.self) async throws(MatrixError) -> Response {
        let (data, attempts) = try await send(request)
        do {
            return try JSONDecoder().decode(Response.self, from: data.isEmpty ? Data("{}".utf8) : data)
        } catch {
            throw MatrixError(kind: .invalidResponse, call: request.call, endpoint: request.endpoint, status: 200,
                              message: "unexpected response body: \(error)", attempts: attempts)
        }
    }

    /// Encodes `body` as JSON for a request.
    func json(_ body: some Encodable, call: String) throws(MatrixError) -> Data {
        do {
            return try JSONEncoder().encode(body)
        } catch {
            throw MatrixError(kind: .invalidRequest, call: call, endpoint: call, message: "content does not encode: \(error)", attempts: 0)
        }
    }

    /// The `user_id` query item for acting as `user` (none for the token's own user).
    func acting(_ user: UserID?) -> [(String, String)] { user.map { [("user_id", $0.rawValue)] } ?? [] }

    private func send(_ request: ClientRequest) async throws(MatrixError) -> (Data, Int) {
        var attempts = 0, rateLimitWaits = 0
        while true {
            attempts += 1
            let failure: RetryPolicy.Failure
            let error: MatrixError
            do {
                let (data, status, retryAfterHeader) = try await exchange(request)
                if (200..<300).contains(status) { return (data, attempts + rateLimitWaits) }
                let body = try? JSONDecoder().decode(MatrixErrorBody.self, from: data)
                let retryAfter = retryAfterHeader.flatMap { Int($0) }
                failure = .status(status, errcode: body?.errcode, retryAfterMilliseconds: body?.retryAfterMilliseconds,
                                  retryAfterHeaderSeconds: retryAfter)
                error = MatrixError(kind: .homeserver, call: request.call, endpoint: request.endpoint, status: status,
                                    errcode: body?.errcode, message: body?.error ?? String(decoding: data.prefix(200), as: UTF8.self),
                                    attempts: attempts + rateLimitWaits)
            } catch let caught as HTTP1Client.Failure {
                if Task.isCancelled { throw cancelled(request, attempts) }
                if case .connectionRefused = caught { failure = .connectionRefused } else { failure = .transport }
                if case .timedOut = caught {
                    error = MatrixError(kind: .timeout, call: request.call, endpoint: request.endpoint, message: caught.description,
                                        attempts: attempts + rateLimitWaits)
                } else {
                    error = MatrixError(kind: .transport, call: request.call, endpoint: request.endpoint, message: caught.description,
                                        attempts: attempts + rateLimitWaits)
                }
            } catch let caught {
                if Task.isCancelled { throw cancelled(request, attempts) }
                let urlError = caught as? URLError
                let refused = [URLError.cannotConnectToHost, .cannotFindHost, .dnsLookupFailed].contains(urlError?.code)
                failure = refused ? .connectionRefused : .transport
                error = MatrixError(kind: urlError?.code == .timedOut ? .timeout : .transport, call: request.call,
                                    endpoint: request.endpoint, message: urlError.map { "\($0.code): \($0.localizedDescription)" } ?? "\(caught)",
                                    attempts: attempts + rateLimitWaits)
            }
            let decision = configuration.retryPolicy.decide(failure, mode: request.retry, attempts: attempts, rateLimitWaits: rateLimitWaits)
            guard case .retry(let wait) = decision else { throw error }
            if case .status(let status, let errcode, _, _) = failure, status == 429 || errcode == MatrixErrorCode.limitExceeded {
                rateLimitWaits += 1
                attempts -= 1
            }
            logger.debug("Retrying client call", metadata: [
                "matrix.call": request.call, "matrix.retry.wait_ms": String(wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000),
                "error": error.description,
            ])
            do { try await Task.sleep(for: wait) } catch { throw cancelled(request, attempts) }
        }
    }

    /// One attempt: the status, body and `Retry-After` header of the answer. Over ``HTTP1Client`` for `http://`,
    /// else URLSession.
    private func exchange(_ request: ClientRequest) async throws -> (Data, Int, String?) {
        guard let plainHTTP else {
            let (data, response) = try await session.data(for: urlRequest(request))
            let http = response as? HTTPURLResponse
            return (data, http?.statusCode ?? 0, http?.value(forHTTPHeaderField: "Retry-After"))
        }
        var headers: [(String, String)] = [("Accept", "application/json")]
        if request.authenticated, !configuration.accessToken.isEmpty {
            headers.append(("Authorization", "Bearer " + configuration.accessToken))
        }
        if request.body != nil { headers.append(("Content-Type", "application/json")) }
        let response = try await plainHTTP.send(method: request.method, target: basePath + request.pathAndQuery, headers: headers,
                                                body: request.body, timeout: configuration.requestTimeout)
        return (response.body, response.status, response.headers["retry-after"])
    }

    private func urlRequest(_ request: ClientRequest) -> URLRequest {
        var urlRequest = URLRequest(url: URL(string: baseURL + request.pathAndQuery)!)
        urlRequest.httpMethod = request.method
        urlRequest.timeoutInterval = Self.seconds(configuration.requestTimeout)
        if request.authenticated, !configuration.accessToken.isEmpty {
            urlRequest.setValue("Bearer " + configuration.accessToken, forHTTPHeaderField: "Authorization")
        }
        if let body = request.body {
            urlRequest.httpBody = body
            urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return urlRequest
    }

    private func cancelled(_ request: ClientRequest, _ attempts: Int) -> MatrixError {
        MatrixError(kind: .cancelled, call: request.call, endpoint: request.endpoint, message: "cancelled", attempts: attempts)
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
