import FoundationEssentials
import IsthmusCommon
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on GNU libmicrohttpd (epoll, one internal thread, suspend/resume; see `MicroHTTPD.swift`).
/// Requests arrive in order on ``requests``; each connection stays suspended until its request is answered, so
/// handlers run as async code without ever blocking libmicrohttpd's thread.
///
/// Each request head goes through ``Configuration/admission`` before any body byte is read: a refusal is answered
/// at once and the connection closed, so a client without credentials costs neither body memory nor a long-lived
/// connection. Admitted bodies are held to their own limit; connections to ``ConnectionPolicy``'s rules.
/// Refusals and dropped connections are logged at most once per source address and reason per minute.
///
/// The socket is bound in `init`. Stop with ``stopAccepting()`` (no more requests are yielded; late ones get 503)
/// and then ``close()`` (unanswered requests get 503, the daemon stops). Thread-safe.
public final class HTTPServer: Sendable {
    /// The bound port.
    public let port: Int
    /// Every complete admitted request, in arrival order. Consume from one task.
    public let requests: AsyncStream<HTTPServerRequest>
    /// What the server and libmicrohttpd's callbacks share (internal for the lifetime tests).
    let core: ServerCore

    /// Binds and starts serving (libmicrohttpd's own thread). Does I/O.
    public init(configuration: Configuration, logger: Logger) throws(HTTPServerError) {
        let (descriptor, port) = try ListenSocket.open(host: configuration.host, port: configuration.port)
        let (stream, continuation) = AsyncStream.makeStream(of: HTTPServerRequest.self)
        let core = ServerCore(continuation: continuation, configuration: configuration, logger: logger)
        // The library's own limit sits above ours: connections the policy is closing still count in it for a
        // moment, and at its limit the library stops accepting altogether.
        let (hardLimit, overflow) = configuration.connectionLimit.multipliedReportingOverflow(by: 2)
        guard let daemon = MicroHTTPDDaemon.start(descriptor: descriptor, core: core, connectionLimit: overflow ? .max : hardLimit,
                                                  idleTimeout: configuration.unauthenticatedTimeout) else {
            _ = Glibc.close(descriptor)
            throw .daemonStartFailed(host: configuration.host, port: port)
        }
        core.daemon.withLock { $0 = daemon }
        self.port = port
        self.core = core
        requests = stream
    }

    deinit { core.close() }

    /// Closes connections that have not authenticated and have been idle, or sending their request head, for
    /// longer than ``Configuration/unauthenticatedTimeout`` (libmicrohttpd's idle timeout alone lets a head
    /// trickled byte by byte live forever). Call about once a second. Thread-safe; does no blocking I/O.
    public func closeExpiredConnections() { core.closeExpiredConnections() }

    /// Ends ``requests``; requests completing from now on are answered 503 at once. Idempotent.
    public func stopAccepting() { core.stopAccepting() }

    /// Answers every unanswered request with 503 and stops the daemon (closing the socket). Idempotent; blocks
    /// briefly while libmicrohttpd's thread ends.
    public func close() { core.close() }
}
