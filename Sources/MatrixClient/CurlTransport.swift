import FoundationEssentials
import IsthmusCommon
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
private import CCurl

/// HTTP(S) over libcurl's multi interface: what ``MatrixClient`` sends every request with. The only file that imports
/// libcurl; no libcurl type leaves it.
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
        _ = Self.globalInit
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

    /// `curl_global_init` before the first handle, once per process.
    private static let globalInit: Void = { _ = curl_global_init(isthmus_curl_global_default()) }()

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
        private let multi: UnsafeMutableRawPointer
        private let caFile: String?
        private let caDirectory: String?
        // The rest belongs to the I/O thread.
        private var running: [UnsafeMutableRawPointer: Exchange] = [:]
        private var idleHandles: [EasyHandle] = []

        init(maxConnections: Int, caFile: String?, caDirectory: String?) {
            multi = curl_multi_init()
            self.caFile = caFile
            self.caDirectory = caDirectory
            _ = isthmus_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, isthmus_curl_pipe_multiplex())
            _ = isthmus_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnections)
            _ = isthmus_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, maxConnections)
        }

        /// Called on any thread.
        func submit(_ exchange: Exchange) {
            let (stopped, wake) = inbox.withLock { inbox in
                if !inbox.stopping { inbox.new.append(exchange) }
                return (inbox.stopping, inbox.wake())
            }
            if stopped { exchange.finish(.failure(.cancelled)) }
            if wake { curl_multi_wakeup(multi) }
        }

        /// Called on any thread.
        func cancel(_ exchange: Exchange) {
            if inbox.withLock({ $0.cancelled.append(exchange); return $0.wake() }) { curl_multi_wakeup(multi) }
        }

        /// Called on any thread.
        func stop() {
            inbox.withLock { $0.stopping = true; _ = $0.wake() }
            curl_multi_wakeup(multi)
        }

        /// The I/O thread's body: returns after ``stop()``.
        func run() {
            var stillRunning: Int32 = 0
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
                _ = curl_multi_perform(multi, &stillRunning)
                collectFinished()
                let idle = inbox.withLock { inbox in
                    inbox.polling = inbox.new.isEmpty && inbox.cancelled.isEmpty && !inbox.stopping
                    return inbox.polling
                }
                if idle { _ = curl_multi_poll(multi, nil, 0, 1000, nil) }
            }
            for (_, exchange) in running { abort(exchange) }
            for handle in idleHandles { curl_easy_cleanup(handle.curl) }
            idleHandles = []
        }

        /// The multi handle outlives the thread: another thread may still be calling `curl_multi_wakeup` on it.
        deinit { curl_multi_cleanup(multi) }

        private func start(_ exchange: Exchange) {
            let handle = idleHandles.popLast() ?? EasyHandle()
            exchange.handle = handle
            if let problem = handle.configure(for: exchange, caFile: caFile, caDirectory: caDirectory) {
                release(exchange)
                exchange.finish(.failure(.unusable(problem)))
                return
            }
            running[handle.curl] = exchange
            _ = curl_multi_add_handle(multi, handle.curl)
        }

        /// Takes a request out of the multi handle and answers it as cancelled (no-op if it already finished).
        private func abort(_ exchange: Exchange) {
            guard let handle = exchange.handle, running[handle.curl] === exchange else { return }
            running[handle.curl] = nil
            _ = curl_multi_remove_handle(multi, handle.curl)
            release(exchange)
            exchange.finish(.failure(.cancelled))
        }

        private func collectFinished() {
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let curl = message.pointee.easy_handle,
                      let exchange = running.removeValue(forKey: curl), let handle = exchange.handle else { continue }
                let code = message.pointee.data.result
                _ = curl_multi_remove_handle(multi, curl)
                let result = handle.outcome(of: exchange, code: code)
                release(exchange)
                exchange.finish(result)
            }
        }

        /// Frees the request's header list and puts its handle back for the next request.
        private func release(_ exchange: Exchange) {
            exchange.freeHeaderList()
            if let handle = exchange.handle {
                exchange.handle = nil
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
        var handle: EasyHandle?
        var headerList: UnsafeMutablePointer<curl_slist>?
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

        func freeHeaderList() {
            curl_slist_free_all(headerList)
            headerList = nil
        }
    }

    /// A reusable easy handle and its error buffer (`CURLOPT_ERRORBUFFER`). Used by the I/O thread only.
    private final class EasyHandle {
        let curl: UnsafeMutableRawPointer
        private let errorBuffer: UnsafeMutablePointer<CChar>

        init() {
            curl = curl_easy_init()
            errorBuffer = .allocate(capacity: Int(isthmus_curl_error_size()))
            errorBuffer.initialize(repeating: 0, count: Int(isthmus_curl_error_size()))
        }

        deinit { errorBuffer.deallocate() }

        /// Sets every option for `exchange` (after a reset: nothing of the previous request remains; connections,
        /// DNS and TLS session caches stay). Returns why the request cannot be made, or nil.
        func configure(for exchange: Exchange, caFile: String?, caDirectory: String?) -> String? {
            let request = exchange.request
            curl_easy_reset(curl)
            errorBuffer[0] = 0
            var failed: CURLcode?
            func check(_ code: CURLcode) { if code != CURLE_OK, failed == nil { failed = code } }
            check(isthmus_curl_easy_setopt_string(curl, CURLOPT_URL, request.url))
            check(isthmus_curl_easy_setopt_string(curl, CURLOPT_PROTOCOLS_STR, "http,https"))
            check(isthmus_curl_easy_setopt_pointer(curl, CURLOPT_ERRORBUFFER, errorBuffer))
            check(isthmus_curl_easy_setopt_long(curl, CURLOPT_NOSIGNAL, 1))
            check(isthmus_curl_easy_setopt_long(curl, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS))
            check(isthmus_curl_easy_setopt_long(curl, CURLOPT_PIPEWAIT, 1))
            check(isthmus_curl_easy_setopt_long(curl, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1))
            let timeout = Self.milliseconds(request.timeout)
            check(isthmus_curl_easy_setopt_long(curl, CURLOPT_TIMEOUT_MS, timeout))
            check(isthmus_curl_easy_setopt_long(curl, CURLOPT_CONNECTTIMEOUT_MS, min(timeout, 10_000)))
            if let caFile { check(isthmus_curl_easy_setopt_string(curl, CURLOPT_CAINFO, caFile)) }
            if let caDirectory { check(isthmus_curl_easy_setopt_string(curl, CURLOPT_CAPATH, caDirectory)) }
            // libcurl sends a request again, once more on a fresh connection, when a *reused* connection dies before
            // any byte of the answer arrived (`Curl_retry_request` in lib/transfer.c, 7.88) — whatever the method,
            // even a POST whose body was sent whole. Harmless for GETs and PUTs with a transaction id; a POST that
            // creates something gets a connection of its own instead, which libcurl never retries that way (a refused
            // HTTP/2 stream is retried too, but the server promises it processed nothing of it).
            if !request.mayReuseConnection { check(isthmus_curl_easy_setopt_long(curl, CURLOPT_FRESH_CONNECT, 1)) }

            let context = Unmanaged.passUnretained(exchange).toOpaque()
            check(isthmus_curl_easy_setopt_callback(curl, CURLOPT_WRITEFUNCTION, Self.receiveBody))
            check(isthmus_curl_easy_setopt_pointer(curl, CURLOPT_WRITEDATA, context))
            check(isthmus_curl_easy_setopt_callback(curl, CURLOPT_HEADERFUNCTION, Self.receiveHeader))
            check(isthmus_curl_easy_setopt_pointer(curl, CURLOPT_HEADERDATA, context))

            var list: UnsafeMutablePointer<curl_slist>?
            var hasContentType = false
            for (name, value) in request.headers {
                if name.lowercased() == "content-type" { hasContentType = true }
                list = curl_slist_append(list, "\(name): \(value)")
            }
            // No `Expect: 100-continue` round trip for large bodies; no form content type libcurl would add to a POST.
            list = curl_slist_append(list, "Expect:")
            if !hasContentType { list = curl_slist_append(list, "Content-Type:") }
            exchange.headerList = list
            check(isthmus_curl_easy_setopt_slist(curl, CURLOPT_HTTPHEADER, list))

            if request.method == "GET" && request.body == nil {
                check(isthmus_curl_easy_setopt_long(curl, CURLOPT_HTTPGET, 1))
            } else {
                // The body is copied by libcurl; a method other than POST is sent as a custom one with that body.
                let body = request.body ?? Data()
                check(isthmus_curl_easy_setopt_offset(curl, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
                if body.isEmpty {
                    check(isthmus_curl_easy_setopt_string(curl, CURLOPT_COPYPOSTFIELDS, ""))
                } else {
                    body.withUnsafeBytes { bytes in
                        check(isthmus_curl_easy_setopt_pointer(curl, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress)))
                    }
                }
                if request.method != "POST" { check(isthmus_curl_easy_setopt_string(curl, CURLOPT_CUSTOMREQUEST, request.method)) }
            }
            guard let failed else { return nil }
            return "cannot set up a request to \(request.url): \(message(for: failed))"
        }

        /// The answer, or the failure in its class (see ``TransportFailure``), once libcurl is done with `exchange`.
        func outcome(of exchange: Exchange, code: CURLcode) -> Result<HTTPResponse, TransportFailure> {
            if exchange.tooLarge { return .failure(.broken("answer larger than \(CurlTransport.maxResponseBytes) bytes")) }
            let reason = message(for: code)
            switch code {
            case CURLE_OK:
                var status = 0, version = 0
                _ = isthmus_curl_easy_getinfo_long(curl, CURLINFO_RESPONSE_CODE, &status)
                _ = isthmus_curl_easy_getinfo_long(curl, CURLINFO_HTTP_VERSION, &version)
                let httpVersion = version == CURL_HTTP_VERSION_2_0 ? "2" : version == CURL_HTTP_VERSION_1_0 ? "1.0" : "1.1"
                return .success(HTTPResponse(status: status, headers: exchange.headers, body: exchange.body, httpVersion: httpVersion))
            case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
                return .failure(.connectFailed(reason))
            case CURLE_OPERATION_TIMEDOUT:
                return .failure(.timedOut(reason))
            case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
                 CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE:
                return .failure(.unusable("certificate of \(exchange.host) not accepted: \(Self.certificateReason(reason))"))
            case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_NOTFOUND,
                 CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED:
                return .failure(.unusable("TLS with \(exchange.host) failed: \(reason)"))
            case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL, CURLE_NOT_BUILT_IN, CURLE_BAD_FUNCTION_ARGUMENT,
                 CURLE_UNKNOWN_OPTION, CURLE_FAILED_INIT:
                return .failure(.unusable("cannot request \(exchange.request.url): \(reason)"))
            default:
                return .failure(.broken(reason))
            }
        }

        /// The error buffer's text, or libcurl's generic text for `code`.
        private func message(for code: CURLcode) -> String {
            let detail = String(decoding: UnsafeRawBufferPointer(start: errorBuffer, count: strlen(errorBuffer)), as: UTF8.self)
            if !detail.isEmpty { return detail.hasSuffix("\n") ? String(detail.dropLast()) : detail }
            return String(cString: curl_easy_strerror(code))
        }

        /// `SSL certificate problem: self-signed certificate` → `self-signed certificate`.
        private static func certificateReason(_ text: String) -> String {
            for prefix in ["SSL certificate problem: ", "SSL: "] where text.hasPrefix(prefix) { return String(text.dropFirst(prefix.count)) }
            return text
        }

        private static func milliseconds(_ duration: Duration) -> Int {
            max(1, Int(duration.components.seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000))
        }

        /// `CURLOPT_WRITEFUNCTION`: body bytes, appended to the exchange (returning less than given aborts the request).
        private static let receiveBody: isthmus_curl_data_callback = { data, size, count, context in
            let exchange = Unmanaged<Exchange>.fromOpaque(context!).takeUnretainedValue()
            let length = size * count
            guard exchange.body.count + length <= CurlTransport.maxResponseBytes else {
                exchange.tooLarge = true
                return 0
            }
            if let data { exchange.body.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: length) }
            return length
        }

        /// `CURLOPT_HEADERFUNCTION`: one header line (see ``CurlTransport/readHeaderLine(_:into:)``).
        private static let receiveHeader: isthmus_curl_data_callback = { data, size, count, context in
            let exchange = Unmanaged<Exchange>.fromOpaque(context!).takeUnretainedValue()
            let length = size * count
            guard let data else { return length }
            CurlTransport.readHeaderLine(UnsafeRawBufferPointer(start: data, count: length), into: &exchange.headers)
            return length
        }
    }
}
