private import CMicroHTTPD
import FoundationEssentials
import Matrix
#if canImport(Glibc)
import Glibc
#endif

// The only file that touches GNU libmicrohttpd (0.9.75 on Debian 12). It turns the library's C callbacks into
// calls on ``ServerCore`` and offers the few connection operations the core needs.
//
// What libmicrohttpd lets us do, and what it does not (checked against the 0.9.75 sources):
// - The access handler's first call comes when the request head has arrived and before any body byte is read.
//   A response queued in that call makes the library discard the body and close the connection once the
//   response is sent (`discard_request` in `MHD_queue_response`): refusals cost no body bytes.
// - `MHD_queue_response` is refused while the body is being received: a chunked body that passes its limit can
//   only be answered 413 once it has ended (the rest is drained, not stored) or be cut off without an answer.
// - `MHD_OPTION_CONNECTION_LIMIT` makes the library stop accepting at the limit (new connections wait in the
//   kernel's backlog); it never closes an existing connection to make room. So the library's limit is set above
//   ours and ``ConnectionPolicy`` picks which connection to close, which is done here by shutting its socket down
//   (`shutdown`, never `close`: the descriptor stays the library's, and it is shut only while the connection is
//   known open, i.e. before the library's CLOSED notification, after which it closes the descriptor).
// - `MHD_OPTION_PER_IP_CONNECTION_LIMIT` refuses new connections from an address at its limit whoever they are:
//   attackers sharing the homeserver's address (loopback, NAT) would lock it out. Not used; the policy caps only
//   unauthenticated connections per address.
// - `MHD_OPTION_CONNECTION_TIMEOUT` is an idle timeout (any byte resets it), per connection adjustable with
//   `MHD_set_connection_option`; suspended connections never time out. A head trickled one byte at a time
//   defeats it, hence the policy's own deadline for unauthenticated connections (``HTTPServer/closeExpiredConnections()``).
// - There is no total request timeout; ``ServerCore`` checks one whenever body bytes arrive.
// - A request head must fit the connection's memory pool (`MHD_OPTION_CONNECTION_MEMORY_LIMIT`, 32 KiB by default);
//   a larger one is answered 431 (or 414 for the URI) by the library itself, without reaching us.
// - `MHD_USE_TURBO` is not used: it only skips a few system calls, and those are not what costs here.

/// One libmicrohttpd connection, from its STARTED to its CLOSED notification. Use it only on libmicrohttpd's
/// thread, or under ``ServerCore``'s connection lock while the connection is known open.
struct MicroHTTPDConnection: @unchecked Sendable {
    fileprivate let pointer: OpaquePointer

    /// The identity ``ConnectionPolicy`` knows the connection by.
    var id: ConnectionPolicy.ID { ConnectionPolicy.ID(rawValue: UInt(bitPattern: UnsafeRawPointer(pointer))) }

    /// Queues `response` (only in the head's call or after the whole body). Returns whether it was accepted.
    func queue(_ response: HTTPServerResponse) -> Bool {
        let handle: OpaquePointer?
        if let stream = response.stream {
            // The reader context holds the body and this connection until libmicrohttpd frees the response.
            let reader = Unmanaged.passRetained(StreamReader(body: stream, connection: self)).toOpaque()
            handle = MHD_create_response_from_callback(stream.length.map { UInt64($0) } ?? UInt64.max, 64 << 10,
                                                       streamRead, reader, streamFreed)
            if handle == nil { Unmanaged<StreamReader>.fromOpaque(reader).release() }
        } else {
            handle = response.body.withUnsafeBytes { bytes in
                MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                                                MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
            }
        }
        guard let handle else { return false }
        defer { MHD_destroy_response(handle) }
        for (name, value) in response.headers { _ = MHD_add_response_header(handle, name, value) }
        return MHD_queue_response(pointer, UInt32(response.status), handle) == MHD_Result.YES
    }

    /// Stops processing the connection until ``resume()`` (the daemon was started with suspend/resume).
    func suspend() { MHD_suspend_connection(pointer) }

    /// Wakes a suspended connection; the access handler is called again. Any thread.
    func resume() { MHD_resume_connection(pointer) }

    /// Sets this connection's idle timeout (whole seconds, at least one). libmicrohttpd's thread only.
    func setIdleTimeout(_ timeout: Duration) {
        _ = isthmus_mhd_set_connection_timeout(pointer, UInt32(Self.wholeSeconds(timeout)))
    }

    /// Shuts the socket down both ways: the library sees the end of the stream and closes the connection.
    func shutDown() {
        let descriptor = isthmus_mhd_connection_fd(pointer)
        if descriptor >= 0 { _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }
    }

    /// Whether bytes from the peer wait in the socket that the library has not read yet (`MSG_PEEK`, never blocks).
    var hasUnreadInput: Bool {
        let descriptor = isthmus_mhd_connection_fd(pointer)
        guard descriptor >= 0 else { return false }
        var byte: UInt8 = 0
        return Glibc.recv(descriptor, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) > 0
    }

    /// The peer's IP address as text, or `unknown`.
    var remoteAddress: String {
        guard let address = isthmus_mhd_client_address(pointer) else { return "unknown" }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = Int32(address.pointee.sa_family)
        let converted: UnsafePointer<CChar>? = switch family {
        case AF_INET:
            address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                withUnsafePointer(to: inet.pointee.sin_addr) { inet_ntop(family, $0, &text, socklen_t(text.count)) }
            }
        case AF_INET6:
            address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet6 in
                withUnsafePointer(to: inet6.pointee.sin6_addr) { inet_ntop(family, $0, &text, socklen_t(text.count)) }
            }
        default: nil
        }
        guard converted != nil else { return "unknown" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Request headers by lower-case name (the last value wins).
    func headers() -> [String: String] {
        Dictionary(values(MHD_ValueKind.HEADER_KIND).map { ($0.0.lowercased(), $0.1 ?? "") }, uniquingKeysWith: { $1 })
    }

    /// Raw query arguments in order.
    func query() -> [AppServiceRequest.QueryItem] {
        values(MHD_ValueKind.GET_ARGUMENT_KIND).map { AppServiceRequest.QueryItem(name: $0.0, value: $0.1) }
    }

    /// All values of `kind` in order.
    private func values(_ kind: MHD_ValueKind) -> [(String, String?)] {
        final class Box { var items: [(String, String?)] = [] }
        let box = Box()
        _ = withExtendedLifetime(box) {
            MHD_get_connection_values(pointer, kind, { cls, _, key, value in
                guard let cls, let key else { return MHD_Result.YES }
                Unmanaged<Box>.fromOpaque(cls).takeUnretainedValue().items.append((String(cString: key), value.map { String(cString: $0) }))
                return MHD_Result.YES
            }, Unmanaged.passUnretained(box).toOpaque())
        }
        return box.items
    }

    /// `timeout` in whole seconds, rounded up, at least one (libmicrohttpd's unit; 0 would mean "never").
    static func wholeSeconds(_ timeout: Duration) -> Int {
        let (seconds, attoseconds) = timeout.components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }
}

/// A running libmicrohttpd daemon (epoll, one internal thread, suspend/resume). Stop it once.
struct MicroHTTPDDaemon: @unchecked Sendable {
    private let pointer: OpaquePointer

    /// Starts serving the listening socket `descriptor` for `core`, which must outlive the daemon.
    /// `connectionLimit` is the library's own hard limit; `idleTimeout` the default idle timeout of a connection.
    static func start(descriptor: Int32, core: ServerCore, connectionLimit: Int, idleTimeout: Duration) -> MicroHTTPDDaemon? {
        let flags = UInt32(MHD_USE_EPOLL_INTERNAL_THREAD.rawValue) | UInt32(MHD_ALLOW_SUSPEND_RESUME.rawValue)
        let context = Unmanaged.passUnretained(core).toOpaque()
        func option(_ name: MHD_OPTION) -> CVarArg { Int32(bitPattern: name.rawValue) }
        let contextArgument: CVarArg = OpaquePointer(context)
        let options: [CVarArg] = [
            option(.LISTEN_SOCKET), descriptor,
            option(.NOTIFY_COMPLETED), unsafeBitCast(requestCompleted, to: OpaquePointer.self), contextArgument,
            option(.NOTIFY_CONNECTION), unsafeBitCast(connectionNotified, to: OpaquePointer.self), contextArgument,
            option(.UNESCAPE_CALLBACK), unsafeBitCast(keepEscaped, to: OpaquePointer.self), contextArgument,
            option(.CONNECTION_TIMEOUT), UInt32(MicroHTTPDConnection.wholeSeconds(idleTimeout)),
            option(.CONNECTION_LIMIT), UInt32(clamping: connectionLimit),
            option(.END),
        ]
        let daemon = withVaList(options) { arguments in
            MHD_start_daemon_va(flags, 0, nil, nil, accessHandler, context, arguments)
        }
        return daemon.map { MicroHTTPDDaemon(pointer: $0) }
    }

    /// Stops the daemon: closes every connection and the listening socket; returns once its thread has ended.
    func stop() { MHD_stop_daemon(pointer) }
}

// MARK: - C callbacks (libmicrohttpd's thread)

/// `MHD_AccessHandlerCallback`: called with the head, then with each body chunk, then with no data; and once more
/// after a resume, when the answer is queued. `con_cls` holds the retained ``PendingRequest`` once a body is read.
private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadSize, conCls in
    guard let cls, let connection, let conCls, let uploadSize else { return MHD_Result.NO }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let handle = MicroHTTPDConnection(pointer: connection)

    guard let existing = conCls.pointee else {
        let method = method.map { String(cString: $0) } ?? ""
        switch core.headArrived(on: handle, method: method, path: url.map { String(cString: $0) } ?? "/") {
        case .answer(let response):
            return handle.queue(response) ? MHD_Result.YES : MHD_Result.NO
        case .readBody(let request):
            conCls.pointee = Unmanaged.passRetained(request).toOpaque()
            return MHD_Result.YES
        case .drop:
            return MHD_Result.NO
        }
    }
    let request = Unmanaged<PendingRequest>.fromOpaque(existing).takeUnretainedValue()

    if uploadSize.pointee > 0 {
        let bytes = UnsafeRawBufferPointer(start: uploadData.map { UnsafeRawPointer($0) }, count: uploadSize.pointee)
        uploadSize.pointee = 0
        return core.bodyArrived(bytes, for: request) ? MHD_Result.YES : MHD_Result.NO
    }
    switch core.bodyEnded(request) {
    case .answer(let response): return handle.queue(response) ? MHD_Result.YES : MHD_Result.NO
    case .wait: return MHD_Result.YES
    }
}

/// `MHD_RequestCompletedCallback`: the request ended (answered or aborted); releases its ``PendingRequest``.
private let requestCompleted: MHD_RequestCompletedCallback = { cls, connection, conCls, _ in
    if let cls, let connection {
        Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().requestEnded(on: MicroHTTPDConnection(pointer: connection))
    }
    guard let conCls, let raw = conCls.pointee else { return }
    Unmanaged<PendingRequest>.fromOpaque(raw).release()
    conCls.pointee = nil
}

/// `MHD_NotifyConnectionCallback`: a connection was accepted, or is gone (its descriptor is closed right after).
private let connectionNotified: MHD_NotifyConnectionCallback = { cls, connection, _, code in
    guard let cls, let connection else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    switch code {
    case MHD_ConnectionNotificationCode.CONNECTION_NOTIFY_STARTED: core.connectionOpened(MicroHTTPDConnection(pointer: connection))
    case MHD_ConnectionNotificationCode.CONNECTION_NOTIFY_CLOSED: core.connectionClosed(MicroHTTPDConnection(pointer: connection))
    default: break
    }
}

/// What a streamed response's content reader needs: the body and the connection to suspend while it is empty.
private final class StreamReader {
    let body: HTTPStreamingBody
    let connection: MicroHTTPDConnection

    init(body: HTTPStreamingBody, connection: MicroHTTPDConnection) {
        self.body = body
        self.connection = connection
    }
}

/// `MHD_ContentReaderCallback`: copies buffered bytes; with none yet, suspends the connection until the producer's
/// next write resumes it (returning 0 with an internal polling thread would otherwise spin).
private let streamRead: MHD_ContentReaderCallback = { cls, _, buffer, max in
    guard let cls, let buffer else { return -2 }  // MHD_CONTENT_READER_END_WITH_ERROR
    let reader = Unmanaged<StreamReader>.fromOpaque(cls).takeUnretainedValue()
    let connection = reader.connection
    switch reader.body.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: max), resume: { connection.resume() }) {
    case .bytes(let count): return count
    case .wait:
        connection.suspend()
        return 0
    case .end: return -1  // MHD_CONTENT_READER_END_OF_STREAM
    case .failed: return -2  // MHD_CONTENT_READER_END_WITH_ERROR: the connection is closed
    }
}

/// `MHD_ContentReaderFreeCallback`: the response is released (sent or abandoned); the producer stops.
private let streamFreed: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    let reader = Unmanaged<StreamReader>.fromOpaque(cls).takeRetainedValue()
    reader.body.abandon()
}

/// `MHD_UnescapeCallback` that keeps the path and query raw: the router decodes each segment itself.
private let keepEscaped: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?) -> Int = { _, _, text in
    text.map { strlen($0) } ?? 0
}
