import FoundationEssentials
import IsthmusCommon
import Synchronization
private import Curl

/// HTTP(S) over libcurl's multi interface (``CurlMulti``): what ``MatrixClient`` sends every request with.
///
/// One thread runs `curl_multi_poll` and drives every request in flight; ``send(_:)`` hands a request over and wakes it
/// (`curl_multi_wakeup`), and the answer comes back through a continuation resumed on that thread (no task per answer).
/// Connections are the multi handle's: kept alive and reused, HTTP/2 where the server offers it over TLS (ALPN), with
/// every request multiplexed on one connection (`CURLPIPE_MULTIPLEX` + `CURLOPT_PIPEWAIT`); plain `http://` speaks
/// HTTP/1.1 with up to `maxConnections` connections. Easy handles are reused. Deadlines are libcurl's
/// (`CURLOPT_TIMEOUT_MS`, `CURLOPT_CONNECTTIMEOUT_MS`).
///
/// Trust: `caFile` if given, else `SSL_CERT_FILE`/`SSL_CERT_DIR` if set (libcurl itself ignores them; OpenSSL's
/// defaults honoured them for the former client), else libcurl's built-in CA bundle (Debian: the system store).
/// Proxies: `CURLOPT_PROXY` is never set, so libcurl reads `https_proxy`/`HTTPS_PROXY`, `http_proxy` (lower case only),
/// `all_proxy` and `no_proxy`/`NO_PROXY` for every connection it makes.
///
/// Thread-safe. Stopping: the thread ends when the transport is released; requests still in flight fail as cancelled.
final class CurlTransport: Sendable {
    private let loop: Loop

    /// Largest answer body accepted; a bigger one fails the request (a homeserver never sends one).
    static let maxResponseBytes = 64 << 20

    /// `maxConnections`: connections to one host at most (HTTP/1.1; HTTP/2 multiplexes on one).
    init(maxConnections: Int, caFile: String?) {
        let environment = ProcessInfo.processInfo.environment
        loop = Loop(maxConnections: max(1, maxConnections),
                    caFile: caFile ?? environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 },
                    caDirectory: caFile == nil ? environment["SSL_CERT_DIR"].flatMap { $0.isEmpty ? nil : $0 } : nil)
        let loop = loop
        do {
            try DedicatedThread.start(name: "isthmus-curl") { loop.run() }
        } catch {
            // Only at start-up, when the process cannot create a single thread more: nothing sensible can run.
            preconditionFailure("cannot start libcurl's I/O thread: \(error)")
        }
    }

    deinit { loop.stop() }

    /// Sends `request` and waits for its answer. Cancelling the calling task aborts the request.
    func send(_ request: HTTPRequest) async throws(TransportFailure) -> HTTPResponse {
        if Task.isCancelled { throw .cancelled }
        let exchange = Exchange(request)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<HTTPResponse, TransportFailure>, Never>) in
                exchange.continuation = continuation
                loop.submit(exchange)
            }
        } onCancel: {
            loop.cancel(exchange)
        }
        return try result.get()
    }

    // MARK: The I/O thread

    /// The multi handle and everything only the I/O thread touches, plus a locked inbox the other threads fill.
    private final class Loop: @unchecked Sendable {
        private struct Inbox {
            var new: [Exchange] = []
            var cancelled: [Exchange] = []
            var stopping = false
            /// The I/O thread is in (or about to enter) `curl_multi_poll`: whoever adds work wakes it. While it is busy
            /// it finds new work on its next turn without a wake-up (a write and two reads saved per request).
            var polling = false

            /// Clears ``polling``; true if it was set (the caller must then wake the thread).
            mutating func wake() -> Bool {
                defer { polling = false }
                return polling
            }
        }

        private let inbox = Mutex(Inbox())
        /// Only `wakeup` is called from other threads; the multi handle outlives the I/O thread for them.
        private let multi: CurlMulti
        private let caFile: String?
        private let caDirectory: String?
        // The rest belongs to the I/O thread.
        private var running: [ObjectIdentifier: Exchange] = [:]
        /// Reset handles, kept for the next requests.
        private var idleHandles: [CurlEasy] = []

        init(maxConnections: Int, caFile: String?, caDirectory: String?) {
            multi = CurlMulti(maxConnections: maxConnections)
            self.caFile = caFile
            self.caDirectory = caDirectory
        }

        /// Called on any thread.
        func submit(_ exchange: Exchange) {
            let (stopped, wake) = inbox.withLock { inbox in
                if !inbox.stopping { inbox.new.append(exchange) }
                return (inbox.stopping, inbox.wake())
            }
            if stopped { exchange.finish(.failure(.cancelled)) }
            if wake { multi.wakeup() }
        }

        /// Called on any thread.
        func cancel(_ exchange: Exchange) {
            if inbox.withLock({ $0.cancelled.append(exchange); return $0.wake() }) { multi.wakeup() }
        }

        /// Called on any thread.
        func stop() {
            inbox.withLock { $0.stopping = true; _ = $0.wake() }
            multi.wakeup()
        }

        /// The I/O thread's body: returns after ``stop()``.
        func run() {
            while true {
                let (new, cancelled, stopping) = inbox.withLock { inbox in
                    defer { inbox.new = []; inbox.cancelled = []; inbox.polling = false }
                    return (inbox.new, inbox.cancelled, inbox.stopping)
                }
                if stopping {
                    for exchange in new { exchange.finish(.failure(.cancelled)) }
                    break
                }
                for exchange in new { start(exchange) }
                for exchange in cancelled { abort(exchange) }
                multi.perform()
                collectFinished()
                let idle = inbox.withLock { inbox in
                    inbox.polling = inbox.new.isEmpty && inbox.cancelled.isEmpty && !inbox.stopping
                    return inbox.polling
                }
                if idle { multi.poll(milliseconds: 1000) }
            }
            for (_, exchange) in running { abort(exchange) }
            idleHandles = []
        }

        private func start(_ exchange: Exchange) {
            guard let handle = idleHandles.popLast() ?? CurlEasy() else {
                exchange.finish(.failure(.unusable("libcurl cannot create a handle")))
                return
            }
            exchange.handle = handle
            if let problem = exchange.configure(caFile: caFile, caDirectory: caDirectory) {
                release(exchange)
                exchange.finish(.failure(.unusable(problem)))
                return
            }
            running[ObjectIdentifier(handle)] = exchange
            multi.add(handle)
        }

        /// Takes a request out of the multi handle and answers it as cancelled (no-op if it already finished).
        private func abort(_ exchange: Exchange) {
            guard let handle = exchange.handle, running[ObjectIdentifier(handle)] === exchange else { return }
            running[ObjectIdentifier(handle)] = nil
            multi.remove(handle)
            release(exchange)
            exchange.finish(.failure(.cancelled))
        }

        private func collectFinished() {
            for (handle, code) in multi.finished() {
                multi.remove(handle)
                guard let exchange = running.removeValue(forKey: ObjectIdentifier(handle)) else { continue }
                let result = exchange.outcome(code)
                release(exchange)
                exchange.finish(result)
            }
        }

        /// Resets the request's handle (its callbacks, header list and options go) and keeps it for the next request.
        private func release(_ exchange: Exchange) {
            if let handle = exchange.handle {
                exchange.handle = nil
                handle.reset()
                idleHandles.append(handle)
            }
        }
    }

    /// `retry-after:` in lower case.
    private static let retryAfter = Array("retry-after:".utf8)

    /// Reads one response header line into `headers`. Only `Retry-After` is kept (all the client reads), matched on
    /// the bytes: making a String of every header line cost ~7 % of the I/O thread. A status line (a 100 before the
    /// answer, say) starts over. Pure; called on the I/O thread (and by the fuzz harness).
    static func readHeaderLine(_ line: UnsafeRawBufferPointer, into headers: inout [String: String]) {
        if line.starts(with: "HTTP/".utf8) {
            headers = [:]
        } else if line.count > retryAfter.count,
                  zip(line, retryAfter).allSatisfy({ $0 | 0x20 == $1 }) {   // ASCII case-insensitive; ':' | 0x20 == ':'
            let value = line[retryAfter.count...].filter { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D && $0 != 0x0A }
            headers["retry-after"] = String(decoding: value, as: UTF8.self)
        }
    }

    // MARK: One request

    /// A request in flight and what has come back so far. Created by the caller; then touched by the I/O thread only.
    private final class Exchange: @unchecked Sendable {
        let request: HTTPRequest
        var continuation: CheckedContinuation<Result<HTTPResponse, TransportFailure>, Never>?
        var handle: CurlEasy?
        var body = Data()
        var headers: [String: String] = [:]
        var tooLarge = false

        init(_ request: HTTPRequest) { self.request = request }

        /// The URL's host, for error messages.
        var host: String { URLComponents(string: request.url)?.host ?? request.url }

        func finish(_ result: Result<HTTPResponse, TransportFailure>) {
            continuation?.resume(returning: result)
            continuation = nil
        }

        /// Sets every option of ``handle`` (a new or reset one) for the request. Returns why the request cannot be
        /// made, or nil.
        func configure(caFile: String?, caDirectory: String?) -> String? {
            guard let handle else { return "no handle" }
            var failed: CurlCode?
            func check(_ code: CurlCode) { if code != .ok, failed == nil { failed = code } }
            check(handle.set(.url(request.url)))
            check(handle.set(.protocols("http,https")))
            check(handle.set(.http2OverTLS))
            check(handle.set(.waitsToMultiplex))
            check(handle.set(.suppressesConnectHeaders))
            let timeout = max(.milliseconds(1), request.timeout)
            check(handle.set(.timeout(timeout)))
            check(handle.set(.connectTimeout(min(timeout, .seconds(10)))))
            if let caFile { check(handle.set(.caFile(caFile))) }
            if let caDirectory { check(handle.set(.caDirectory(caDirectory))) }
            // libcurl sends a request again, once more on a fresh connection, when a *reused* connection dies before
            // any byte of the answer arrived (`Curl_retry_request` in lib/transfer.c, 7.88) — whatever the method,
            // even a POST whose body was sent whole. Harmless for GETs and PUTs with a transaction id; a POST that
            // creates something gets a connection of its own instead, which libcurl never retries that way (a refused
            // HTTP/2 stream is retried too, but the server promises it processed nothing of it).
            if !request.mayReuseConnection { check(handle.set(.freshConnection)) }

            handle.onBody = { [unowned self] chunk in receiveBody(chunk) }
            handle.onHeader = { [unowned self] line in
                CurlTransport.readHeaderLine(line, into: &headers)
                return true
            }

            var lines: [String] = []
            var hasContentType = false
            for (name, value) in request.headers {
                if name.lowercased() == "content-type" { hasContentType = true }
                lines.append("\(name): \(value)")
            }
            // No `Expect: 100-continue` round trip for large bodies; no form content type libcurl would add to a POST.
            lines.append("Expect:")
            if !hasContentType { lines.append("Content-Type:") }
            check(handle.setHeaders(lines))

            if request.method == "GET" && request.body == nil {
                check(handle.set(.get))
            } else {
                // The body is copied by libcurl; a method other than POST is sent as a custom one with that body.
                check(handle.set(.postFields(request.body ?? Data())))
                if request.method != "POST" { check(handle.set(.customMethod(request.method))) }
            }
            guard let failed else { return nil }
            return "cannot set up a request to \(request.url): \(handle.message(for: failed))"
        }

        /// Body bytes, appended; false (which aborts the request) past ``CurlTransport/maxResponseBytes``.
        private func receiveBody(_ chunk: UnsafeRawBufferPointer) -> Bool {
            guard body.count + chunk.count <= CurlTransport.maxResponseBytes else {
                tooLarge = true
                return false
            }
            if let base = chunk.baseAddress { body.append(base.assumingMemoryBound(to: UInt8.self), count: chunk.count) }
            return true
        }

        /// The answer, or the failure in its class (see ``TransportFailure``), once libcurl is done with the request.
        func outcome(_ code: CurlCode) -> Result<HTTPResponse, TransportFailure> {
            if tooLarge { return .failure(.broken("answer larger than \(CurlTransport.maxResponseBytes) bytes")) }
            guard let handle else { return .failure(.cancelled) }
            let reason = handle.message(for: code)
            switch code {
            case .ok:
                return .success(HTTPResponse(status: handle.responseCode, headers: headers, body: body,
                                             httpVersion: handle.responseHTTPVersion))
            case .couldNotResolveHost, .couldNotResolveProxy, .couldNotConnect:
                return .failure(.connectFailed(reason))
            case .timedOut:
                return .failure(.timedOut(reason))
            case _ where CurlCode.certificateRefused.contains(code):
                return .failure(.unusable("certificate of \(host) not accepted: \(Self.certificateReason(reason))"))
            case _ where CurlCode.tlsFailed.contains(code):
                return .failure(.unusable("TLS with \(host) failed: \(reason)"))
            case _ where CurlCode.unusableRequest.contains(code):
                return .failure(.unusable("cannot request \(request.url): \(reason)"))
            default:
                return .failure(.broken(reason))
            }
        }

        /// `SSL certificate problem: self-signed certificate` → `self-signed certificate`.
        private static func certificateReason(_ text: String) -> String {
            for prefix in ["SSL certificate problem: ", "SSL: "] where text.hasPrefix(prefix) { return String(text.dropFirst(prefix.count)) }
            return text
        }
    }
}
