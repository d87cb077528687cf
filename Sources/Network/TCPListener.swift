import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A listening TCP socket on an IPv4 address, for fake servers in tests and benchmarks. Accepted connections come
/// out of ``connections`` as ``TCPConnection``s. One thread polls the listening socket. `Sendable`.
public final class TCPListener: Sendable {
    /// The bound port (useful with port 0).
    public let port: Int
    /// Accepted connections, in order. Finishes after ``close()``.
    public let connections: AsyncThrowingStream<TCPConnection, any Error>
    private let core: Core

    /// Binds and listens on `host:port` (default: a free loopback port) and starts accepting.
    public init(host: String = "127.0.0.1", port: Int = 0) throws(NetworkError) {
        let (descriptor, boundPort) = try Socket.listen(host: host, port: port)
        self.port = boundPort
        let (stream, continuation) = AsyncThrowingStream<TCPConnection, any Error>.makeStream()
        connections = stream
        core = try Core(descriptor: descriptor, continuation: continuation)
        let core = self.core
        do {
            try IOThread.start { core.acceptLoop() }
        } catch {
            // Never started: close the socket and its wake-up pipe here instead of in the accept loop.
            core.discard()
            throw error
        }
    }

    deinit { close() }

    /// Stops accepting and closes the listening socket; returns once the port is closed (accepted connections
    /// stay open). Blocks the caller for the moment the listener thread needs to notice.
    public func close() { core.close() }

    /// The listening descriptor, its wake-up pipe and the accept loop (run on the listener's thread).
    private final class Core: Sendable {
        let descriptor: Int32
        let wakeup: WakeupPipe
        let closed = Mutex(false)
        /// Signalled once the accept loop has closed the listening socket.
        let stopped = DispatchSemaphore(value: 0)
        let continuation: AsyncThrowingStream<TCPConnection, any Error>.Continuation

        init(descriptor: Int32, continuation: AsyncThrowingStream<TCPConnection, any Error>.Continuation) throws(NetworkError) {
            self.descriptor = descriptor
            self.continuation = continuation
            do {
                wakeup = try WakeupPipe()
            } catch {
                _ = Glibc.close(descriptor)
                throw error
            }
        }

        func close() {
            let wasOpen = closed.withLock { isClosed in
                guard !isClosed else { return false }
                isClosed = true
                wakeup.wake()
                return true
            }
            if wasOpen { stopped.wait() }
        }

        /// Closes the listening socket when the accept loop never started.
        func discard() {
            closed.withLock { isClosed in
                isClosed = true
                _ = Glibc.close(descriptor)
                wakeup.close()
            }
            continuation.finish()
        }

        func acceptLoop() {
            while !closed.withLock({ $0 }) {
                var fds = [
                    pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: wakeup.readEnd, events: Int16(POLLIN), revents: 0),
                ]
                guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { break }
                if fds[1].revents != 0 { wakeup.drain() }
                guard fds[0].revents & Int16(POLLIN) != 0 else { continue }
                let client = accept(descriptor, nil, nil)
                guard client >= 0 else { continue }
                Socket.makeNonBlocking(client)
                var yes: Int32 = 1
                _ = setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
                // On failure `accepted` has already closed the descriptor.
                if let connection = try? TCPConnection.accepted(descriptor: client) { continuation.yield(connection) }
            }
            closed.withLock { isClosed in
                isClosed = true
                _ = Glibc.close(descriptor)
                wakeup.close()
            }
            stopped.signal()
            continuation.finish()
        }
    }
}
