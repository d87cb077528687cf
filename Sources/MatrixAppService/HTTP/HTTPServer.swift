private import CMicroHTTPD
import Foundation
import IsthmusCommon
import Matrix
import Synchronization

/// An HTTP/1.1 server on GNU libmicrohttpd (epoll, one internal thread, suspend/resume): the only file that
/// touches the C library. Requests arrive in order on ``requests``; each connection stays suspended until its
/// request is answered, so handlers run as async code without ever blocking libmicrohttpd's thread.
///
/// The socket is bound in `init`. Stop with ``stopAccepting()`` (no more requests are yielded; late ones get 503)
/// and then ``close()`` (unanswered requests get 503, the daemon stops). Thread-safe.
public final class HTTPServer: Sendable {
    /// Listen address and limits.
    public struct Configuration: Sendable {
        public var host: String
        /// 0 picks a free port (see ``HTTPServer/port``).
        public var port: Int
        /// Larger bodies are discarded; a declared `Content-Length` above it is answered 413 at once.
        public var maxBodyBytes: Int
        /// Idle keep-alive connections close after this many seconds.
        public var connectionTimeoutSeconds: Int
        /// At most this many connections at once.
        public var connectionLimit: Int

        public init(host: String, port: Int, maxBodyBytes: Int = 16 << 20, connectionTimeoutSeconds: Int = 90, connectionLimit: Int = 1024) {
            self.host = host
            self.port = port
            self.maxBodyBytes = maxBodyBytes
            self.connectionTimeoutSeconds = connectionTimeoutSeconds
            self.connectionLimit = connectionLimit
        }
    }

    /// The bound port.
    public let port: Int
    /// Every complete request, in arrival order. Consume from one task.
    public let requests: AsyncStream<HTTPServerRequest>
    private let core: ServerCore

    /// Binds and starts serving (libmicrohttpd's own thread). Does I/O.
    public init(configuration: Configuration, logger: Logger) throws(HTTPServerError) {
        let (descriptor, port) = try ListenSocket.open(host: configuration.host, port: configuration.port)
        let (stream, continuation) = AsyncStream.makeStream(of: HTTPServerRequest.self)
        let core = ServerCore(continuation: continuation, maxBodyBytes: configuration.maxBodyBytes, logger: logger)
        let flags = UInt32(MHD_USE_EPOLL_INTERNAL_THREAD.rawValue) | UInt32(MHD_ALLOW_SUSPEND_RESUME.rawValue)
        let context = Unmanaged.passUnretained(core).toOpaque()
        func option(_ name: MHD_OPTION) -> CVarArg { Int32(bitPattern: name.rawValue) }
        let completed: CVarArg = unsafeBitCast(requestCompleted, to: OpaquePointer.self)
        let unescape: CVarArg = unsafeBitCast(keepEscaped, to: OpaquePointer.self)
        let contextArgument: CVarArg = OpaquePointer(context)
        let timeout: CVarArg = UInt32(configuration.connectionTimeoutSeconds)
        let limit: CVarArg = UInt32(configuration.connectionLimit)
        let options: [CVarArg] = [
            option(.LISTEN_SOCKET), descriptor,
            option(.NOTIFY_COMPLETED), completed, contextArgument,
            option(.UNESCAPE_CALLBACK), unescape, contextArgument,
            option(.CONNECTION_TIMEOUT), timeout,
            option(.CONNECTION_LIMIT), limit,
            option(.END),
        ]
        let daemon = withVaList(options) { arguments in
            MHD_start_daemon_va(flags, 0, nil, nil, accessHandler, context, arguments)
        }
        guard let daemon else {
            Glibc.close(descriptor)
            throw .daemonStartFailed(host: configuration.host, port: port)
        }
        core.daemon.withLock { $0 = DaemonHandle(pointer: daemon) }
        self.port = port
        self.core = core
        requests = stream
    }

    deinit { core.close() }

    /// Ends ``requests``; requests completing from now on are answered 503 at once. Idempotent.
    public func stopAccepting() { core.stopAccepting() }

    /// Answers every unanswered request with 503 and stops the daemon (closing the socket). Idempotent; blocks
    /// briefly while libmicrohttpd's thread ends.
    public func close() { core.close() }
}

// MARK: - State shared with the C callbacks

/// A C pointer that is only used under the owning lock.
private struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// What the server and its callbacks share. All mutable state is behind mutexes.
private final class ServerCore: Sendable {
    struct State {
        var accepting = true
        var closed = false
        var pending: [ObjectIdentifier: PendingRequest] = [:]
    }

    let continuation: AsyncStream<HTTPServerRequest>.Continuation
    let maxBodyBytes: Int
    let logger: Logger
    let daemon = Mutex<DaemonHandle?>(nil)
    let state = Mutex(State())

    init(continuation: AsyncStream<HTTPServerRequest>.Continuation, maxBodyBytes: Int, logger: Logger) {
        self.continuation = continuation
        self.maxBodyBytes = maxBodyBytes
        self.logger = logger
    }

    func stopAccepting() {
        state.withLock { $0.accepting = false }
        continuation.finish()
    }

    func close() {
        stopAccepting()
        let unanswered: [PendingRequest] = state.withLock { state in
            guard !state.closed else { return [] }
            state.closed = true
            let all = Array(state.pending.values)
            state.pending = [:]
            for request in all { request.resume(with: .unavailable) }  // under the lock: before the daemon stops
            return all
        }
        if !unanswered.isEmpty {
            logger.notice("Answered unfinished requests with 503 at shutdown", metadata: ["http.requests": String(unanswered.count)])
        }
        if let handle = daemon.withLock({ handle in defer { handle = nil }; return handle }) {
            MHD_stop_daemon(handle.pointer)
        }
    }

    /// Registers `request` as waiting for its answer; false when the server no longer accepts requests.
    func suspend(_ request: PendingRequest) -> Bool {
        state.withLock { state in
            guard state.accepting, !state.closed else { return false }
            MHD_suspend_connection(request.connection.pointer)
            state.pending[ObjectIdentifier(request)] = request
            return true
        }
    }

    /// Stores the answer and resumes the connection, unless it was already answered (or the server closed).
    func answer(_ request: PendingRequest, with response: HTTPServerResponse) {
        state.withLock { state in
            guard state.pending.removeValue(forKey: ObjectIdentifier(request)) != nil else { return }
            request.resume(with: response)
        }
    }
}

/// One request on one connection (libmicrohttpd's `con_cls`), from its headers to its completion.
private final class PendingRequest: Sendable {
    struct Upload {
        var body: [UInt8] = []
        var tooLarge = false
        var dispatched = false
        var response: HTTPServerResponse?
    }

    let connection: ConnectionHandle
    let method: String
    let path: String
    let upload = Mutex(Upload())

    init(connection: ConnectionHandle, method: String, path: String) {
        self.connection = connection
        self.method = method
        self.path = path
    }

    /// Sets the answer and wakes the connection. Call only under ``ServerCore/state``'s lock.
    func resume(with response: HTTPServerResponse) {
        upload.withLock { $0.response = response }
        MHD_resume_connection(connection.pointer)
    }
}

private struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// Answers a ``PendingRequest`` once; answers 503 if dropped unanswered.
final class HTTPResponder: Sendable {
    private let core: ServerCore
    private let request: PendingRequest

    fileprivate init(core: ServerCore, request: PendingRequest) {
        self.core = core
        self.request = request
    }

    func respond(_ response: HTTPServerResponse) { core.answer(request, with: response) }

    deinit { core.answer(request, with: .unavailable) }
}

// MARK: - C callbacks (libmicrohttpd's thread)

/// `MHD_AccessHandlerCallback`: called with the headers, then with each body chunk, then with no data; and once
/// more after a resume, when the answer is queued.
private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadSize, conCls in
    guard let cls, let connection, let conCls, let uploadSize else { return MHD_Result.NO }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()

    guard let existing = conCls.pointee else {
        let request = PendingRequest(connection: ConnectionHandle(pointer: connection),
                                     method: method.map { String(cString: $0) } ?? "", path: url.map { String(cString: $0) } ?? "/")
        conCls.pointee = Unmanaged.passRetained(request).toOpaque()
        if let length = lookup(connection, MHD_ValueKind.HEADER_KIND, "Content-Length").flatMap(Int.init), length > core.maxBodyBytes {
            return queue(connection, .matrixError(AppServiceRejection(status: 413, errcode: MatrixErrorCode.tooLarge, message: "Request body too large")))
        }
        return MHD_Result.YES
    }
    let request = Unmanaged<PendingRequest>.fromOpaque(existing).takeUnretainedValue()

    if uploadSize.pointee > 0 {
        let count = uploadSize.pointee
        request.upload.withLock { upload in
            guard !upload.tooLarge, let uploadData else { return }
            if upload.body.count + count > core.maxBodyBytes {
                upload.tooLarge = true
                upload.body = []
            } else {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: count) {
                    upload.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: count))
                }
            }
        }
        uploadSize.pointee = 0
        return MHD_Result.YES
    }

    let (response, alreadyDispatched, body, tooLarge): (HTTPServerResponse?, Bool, [UInt8], Bool) = request.upload.withLock { upload in
        defer { upload.dispatched = true; upload.body = [] }
        return (upload.response, upload.dispatched, upload.body, upload.tooLarge)
    }
    if let response { return queue(connection, response) }
    if alreadyDispatched { return MHD_Result.YES }  // woken without an answer: nothing to do yet

    let incoming = HTTPServerRequest(
        method: request.method, path: request.path, query: values(connection, MHD_ValueKind.GET_ARGUMENT_KIND).map {
            AppServiceRequest.QueryItem(name: $0.0, value: $0.1)
        },
        headers: Dictionary(values(connection, MHD_ValueKind.HEADER_KIND).map { ($0.0.lowercased(), $0.1 ?? "") }, uniquingKeysWith: { $1 }),
        body: Data(body), bodyTooLarge: tooLarge, responder: HTTPResponder(core: core, request: request))
    guard core.suspend(request) else { return queue(connection, .unavailable) }
    core.continuation.yield(incoming)
    return MHD_Result.YES
}

/// `MHD_RequestCompletedCallback`: releases the request state retained in `con_cls`.
private let requestCompleted: MHD_RequestCompletedCallback = { _, _, conCls, _ in
    guard let conCls, let raw = conCls.pointee else { return }
    Unmanaged<PendingRequest>.fromOpaque(raw).release()
    conCls.pointee = nil
}

/// `MHD_UnescapeCallback` that keeps the path and query raw: the router decodes each segment itself.
private let keepEscaped: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?) -> Int = { _, _, text in
    text.map { strlen($0) } ?? 0
}

private func queue(_ connection: OpaquePointer, _ response: HTTPServerResponse) -> MHD_Result {
    let handle = response.body.withUnsafeBytes { bytes in
        MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
    }
    guard let handle else { return MHD_Result.NO }
    defer { MHD_destroy_response(handle) }
    for (name, value) in response.headers { _ = MHD_add_response_header(handle, name, value) }
    return MHD_queue_response(connection, UInt32(response.status), handle)
}

private func lookup(_ connection: OpaquePointer, _ kind: MHD_ValueKind, _ key: String) -> String? {
    MHD_lookup_connection_value(connection, kind, key).map { String(cString: $0) }
}

/// All values of `kind` (headers or query arguments) in order.
private func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind) -> [(String, String?)] {
    final class Box { var items: [(String, String?)] = [] }
    let box = Box()
    _ = withExtendedLifetime(box) {
        MHD_get_connection_values(connection, kind, { cls, _, key, value in
            guard let cls, let key else { return MHD_Result.YES }
            Unmanaged<Box>.fromOpaque(cls).takeUnretainedValue().items.append((String(cString: key), value.map { String(cString: $0) }))
            return MHD_Result.YES
        }, Unmanaged.passUnretained(box).toOpaque())
    }
    return box.items
}
