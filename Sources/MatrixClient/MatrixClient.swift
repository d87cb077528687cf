import FoundationEssentials
import IsthmusCommon
import Matrix

/// The Matrix client-server API as the appservice uses it: `Authorization: Bearer <as_token>`, acting as any of its
/// ghosts with `?user_id=` (appservice API §2.4 "Client-Server API extensions"). Also as an ordinary account: with
/// ``AccessTokens`` its token can change under it — a call the homeserver refuses with 401 `M_UNKNOWN_TOKEN` is sent
/// once more with the renewed token. Thread-safe; every call does network I/O through ``CurlTransport``
/// (libcurl: one I/O thread, kept-alive connections, HTTP/2 over TLS where the homeserver offers it), trusting the
/// system's CA store, `SSL_CERT_FILE`, or ``Configuration/trustedCertificatesFile``.
///
/// Every call has a timeout per attempt; rate limits are waited out and network failures and 5xx retried per
/// ``RetryPolicy``; a certificate that is not accepted is not retried (``MatrixError/Kind/unusable``); failures throw
/// ``MatrixError`` naming the call and endpoint.
public final class MatrixClient: Sendable {
    /// Where the homeserver is and how to talk to it.
    public struct Configuration: Sendable {
        /// Base URL of the client-server API, e.g. `http://127.0.0.1:8008`.
        public var homeserverURL: URL
        /// The as_token (or a user's access token; empty for no `Authorization`). Not read when the client was made
        /// with ``AccessTokens``.
        public var accessToken: String
        /// Timeout of one attempt.
        public var requestTimeout: Duration
        public var retryPolicy: RetryPolicy
        /// Connections to the homeserver at most over HTTP/1.1 (HTTP/2 multiplexes every call on one).
        public var maxConnectionsPerHost: Int
        /// For `https://`: trust only the PEM certificates in this file instead of the system's CA store (or the
        /// file `SSL_CERT_FILE` names, or the directory `SSL_CERT_DIR` names).
        public var trustedCertificatesFile: String?
        /// Told of each wait a rate limit (429 `M_LIMIT_EXCEEDED`) imposes on a call, before the wait (metrics).
        public var onRateLimitWait: (@Sendable (MatrixCall, Duration) -> Void)?

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
    /// Where the access token comes from when it can change; nil: ``Configuration/accessToken``, fixed.
    private let tokens: (any AccessTokens)?
    /// libcurl to the homeserver; nil when the URL cannot be used — ``unusable`` says why.
    private let transport: CurlTransport?
    private let unusable: String?
    /// The homeserver URL without a trailing slash (requests' URLs start with it).
    private let baseURL: String
    private let logger: Logger

    /// Creates the client (and ``CurlTransport``'s I/O thread). No network I/O until the first call. A URL it cannot
    /// use (not http(s), no host, credentials in it) makes every call fail with that reason. With `tokens`, every
    /// authenticated call takes its token from there instead of ``Configuration/accessToken``.
    public init(configuration: Configuration, tokens: (any AccessTokens)? = nil, logger: Logger) {
        self.configuration = configuration
        self.tokens = tokens
        self.logger = logger
        let url = configuration.homeserverURL
        let scheme = url.scheme?.lowercased()
        var base = url.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        baseURL = base
        guard let host = url.host, !host.isEmpty, url.user == nil, url.query == nil, url.fragment == nil,
              scheme == "http" || scheme == "https" else {
            transport = nil
            unusable = "cannot use homeserver URL \(url.absoluteString): expected http:// or https:// with a host and no credentials"
            return
        }
        transport = CurlTransport(maxConnections: configuration.maxConnectionsPerHost, caFile: configuration.trustedCertificatesFile)
        unusable = nil
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
    func json(_ body: some Encodable, call: MatrixCall) throws(MatrixError) -> Data {
        do {
            return try JSONEncoder().encode(body)
        } catch {
            throw MatrixError(kind: .invalidRequest, call: call, endpoint: call.rawValue, message: "content does not encode: \(error)", attempts: 0)
        }
    }

    /// The `user_id` query item for acting as `user` (none for the token's own user).
    func acting(_ user: UserID?) -> [(String, String)] { user.map { [("user_id", $0.rawValue)] } ?? [] }

    /// Sends `request`, retrying per the policy: a 2xx answer's body and how many attempts it took, else the
    /// ``MatrixError`` of the last attempt.
    func send(_ request: ClientRequest) async throws(MatrixError) -> (Data, Int) {
        var attempts = 0, rateLimitWaits = 0
        /// The token a refusal was renewed into: the next attempt sends it (only one renewal per call).
        var renewed: AccessToken?
        while true {
            attempts += 1
            let failure: RetryPolicy.Failure
            var error: MatrixError
            let token = try await sourcedToken(for: request, renewed: renewed)
            var rejection: TokenRejection?
            do throws(TransportFailure) {
                let response = try await exchange(request, bearer: request.authenticated ? token?.secret ?? configuration.accessToken : "")
                if (200..<300).contains(response.status) { return (response.body, attempts + rateLimitWaits) }
                let body = try? JSONDecoder().decode(MatrixErrorBody.self, from: response.body)
                if response.status == 401, body?.errcode == MatrixErrorCode.unknownToken, let token, renewed == nil {
                    rejection = TokenRejection(token: token, softLogout: body?.softLogout == true)
                }
                let retryAfter = response.headers["retry-after"].flatMap { Int($0) }
                failure = .status(response.status, errcode: body?.errcode, retryAfterMilliseconds: body?.retryAfterMilliseconds,
                                  retryAfterHeaderSeconds: retryAfter)
                error = MatrixError(kind: .homeserver, call: request.call, endpoint: request.endpoint, status: response.status,
                                    errcode: body?.errcode,
                                    message: body?.error ?? String(decoding: response.body.prefix(200), as: UTF8.self),
                                    attempts: attempts + rateLimitWaits)
                error.softLogout = body?.softLogout == true
                if request.form, let refusal = try? JSONDecoder().decode(OAuthErrorBody.self, from: response.body) {
                    error.oauthError = OAuthErrorCode(rawValue: refusal.error)
                    error.message = refusal.errorDescription.map { "\(refusal.error): \($0)" } ?? refusal.error
                }
            } catch let caught {
                if Task.isCancelled || caught == .cancelled { throw cancelled(request, attempts) }
                let kind: MatrixError.Kind
                switch caught {
                case .unusable:   // a certificate, TLS or URL problem: the same call would fail the same way
                    throw MatrixError(kind: .unusable, call: request.call, endpoint: request.endpoint, message: caught.description,
                                      attempts: attempts + rateLimitWaits)
                case .connectFailed:
                    // Certain to have stored nothing only if the call could not go out on a kept-alive connection:
                    // libcurl sends a request once more, on a new connection, when a reused one dies before any
                    // answer, so a refused connection may follow an attempt the server processed before it stopped
                    // (scripts/chaos, seed 2029: a message stored twice across a Synapse restart).
                    (failure, kind) = (request.mayReuseConnection ? .transport : .connectionRefused, .transport)
                case .timedOut: (failure, kind) = (.transport, .timeout)
                case .broken, .cancelled: (failure, kind) = (.transport, .transport)
                }
                error = MatrixError(kind: kind, call: request.call, endpoint: request.endpoint, message: caught.description,
                                    attempts: attempts + rateLimitWaits)
            }
            if let rejection, let tokens {
                renewed = try await tokens.renewed(after: rejection)
                logger.debug("Sending the call again with a renewed access token", metadata: ["matrix.call": "\(request.call)"])
                continue
            }
            let decision = configuration.retryPolicy.decide(failure, mode: request.retry, attempts: attempts, rateLimitWaits: rateLimitWaits)
            guard case .retry(let wait) = decision else { throw error }
            if case .status(let status, let errcode, _, _) = failure, status == 429 || errcode == MatrixErrorCode.limitExceeded {
                rateLimitWaits += 1
                attempts -= 1
                configuration.onRateLimitWait?(request.call, wait)
            }
            logger.debug("Retrying client call", metadata: [
                "matrix.call": "\(request.call)", "matrix.retry.wait_ms": String(wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000),
                "error": error.description,
            ])
            do { try await Task.sleep(for: wait) } catch { throw cancelled(request, attempts) }
        }
    }

    /// The token from ``AccessTokens`` to send `request` with: `renewed` once a refusal was renewed; nil for an
    /// unauthenticated request or a fixed token.
    private func sourcedToken(for request: ClientRequest, renewed: AccessToken?) async throws(MatrixError) -> AccessToken? {
        guard request.authenticated, let tokens else { return nil }
        if let renewed { return renewed }
        return try await tokens.current()
    }

    /// One attempt, with `Authorization: Bearer <bearer>` unless `bearer` is empty.
    private func exchange(_ request: ClientRequest, bearer: String) async throws(TransportFailure) -> HTTPResponse {
        var headers: [(String, String)] = [("Accept", "application/json")]
        if !bearer.isEmpty { headers.append(("Authorization", "Bearer " + bearer)) }
        if request.body != nil { headers.append(("Content-Type", request.form ? "application/x-www-form-urlencoded" : "application/json")) }
        guard let transport else { throw .unusable(unusable ?? "no homeserver connection") }
        return try await transport.send(HTTPRequest(method: request.method, url: request.absoluteURL ?? baseURL + request.pathAndQuery, headers: headers,
                                                    body: request.body, timeout: request.timeout ?? configuration.requestTimeout,
                                                    mayReuseConnection: request.mayReuseConnection))
    }

    private func cancelled(_ request: ClientRequest, _ attempts: Int) -> MatrixError {
        MatrixError(kind: .cancelled, call: request.call, endpoint: request.endpoint, message: "cancelled", attempts: attempts)
    }
}
