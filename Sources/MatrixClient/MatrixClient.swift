import Foundation
import IsthmusCommon
import Matrix
import Network

/// The Matrix client-server API as the appservice uses it: `Authorization: Bearer <as_token>`, acting as any of its
/// ghosts with `?user_id=` (appservice API §2.4 "Client-Server API extensions"). Also works with an ordinary
/// user's access token (tests, relay mode). Thread-safe; every call does network I/O over ``HTTP1Client``'s
/// keep-alive connections (`https://` through OpenSSL, trusting the system's CA store or
/// ``Configuration/trustedCertificatesFile``).
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
        /// For `https://`: trust only the PEM certificates in this file instead of the system's CA store (which
        /// OpenSSL finds itself, honouring `SSL_CERT_FILE`/`SSL_CERT_DIR`).
        public var trustedCertificatesFile: String?

        public init(homeserverURL: URL, accessToken: String, requestTimeout: Duration = .seconds(30),
                    retryPolicy: RetryPolicy = RetryPolicy(), maxConnectionsPerHost: Int = 32,
                    trustedCertificatesFile: String? = nil) {
            self.homeserverURL = homeserverURL
            self.accessToken = accessToken
            self.requestTimeout = requestTimeout
            self.retryPolicy = retryPolicy
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.trustedCertificatesFile = trustedCertificatesFile
        }
    }

    public let configuration: Configuration
    /// HTTP/1.1 to the homeserver (TLS for `https://`); nil when the URL cannot be used — ``unusable`` says why.
    private let http1: HTTP1Client?
    private let unusable: String?
    /// The homeserver URL's path (requests' targets start with it).
    private let basePath: String
    private let logger: Logger

    /// Creates the client. No I/O until the first call. A URL it cannot use (not http(s), no host, credentials in
    /// it) or a TLS set-up that fails makes every call fail with that reason.
    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        let url = configuration.homeserverURL
        let scheme = url.scheme?.lowercased()
        var path = url.path
        while path.hasSuffix("/") { path.removeLast() }
        basePath = path
        guard let host = url.host, !host.isEmpty, url.user == nil, scheme == "http" || scheme == "https" else {
            http1 = nil
            unusable = "cannot use homeserver URL \(url.absoluteString): expected http:// or https:// with a host and no credentials"
            return
        }
        if scheme == "http" {
            http1 = HTTP1Client(host: host, port: url.port ?? 80, maxConnections: configuration.maxConnectionsPerHost)
            unusable = nil
            return
        }
        do {
            let tls = try TLSContext(caFile: configuration.trustedCertificatesFile)
            http1 = HTTP1Client(host: host, port: url.port ?? 443, maxConnections: configuration.maxConnectionsPerHost, tls: tls)
            unusable = nil
        } catch {
            http1 = nil
            unusable = "\(error)"
        }
    }

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
                if case .unusable(let reason) = caught {   // nothing to retry
                    throw MatrixError(kind: .transport, call: request.call, endpoint: request.endpoint, message: reason, attempts: attempts)
                }
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
                failure = .transport
                error = MatrixError(kind: .transport, call: request.call, endpoint: request.endpoint, message: "\(caught)",
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

    /// One attempt: the status, body and `Retry-After` header of the answer.
    private func exchange(_ request: ClientRequest) async throws -> (Data, Int, String?) {
        guard let http1 else { throw HTTP1Client.Failure.unusable(unusable ?? "no homeserver connection") }
        var headers: [(String, String)] = [("Accept", "application/json")]
        if request.authenticated, !configuration.accessToken.isEmpty {
            headers.append(("Authorization", "Bearer " + configuration.accessToken))
        }
        if request.body != nil { headers.append(("Content-Type", "application/json")) }
        let response = try await http1.send(method: request.method, target: basePath + request.pathAndQuery, headers: headers,
                                                body: request.body, timeout: configuration.requestTimeout)
        return (response.body, response.status, response.headers["retry-after"])
    }

    private func cancelled(_ request: ClientRequest, _ attempts: Int) -> MatrixError {
        MatrixError(kind: .cancelled, call: request.call, endpoint: request.endpoint, message: "cancelled", attempts: attempts)
    }
}
