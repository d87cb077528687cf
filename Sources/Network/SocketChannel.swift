import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One open socket and the I/O thread that serves it: `poll()` on the socket and a wake-up pipe, read whatever
/// arrives into one `AsyncThrowingStream` (a single consumer sees chunks in order), write queued bytes when the
/// socket can take them.
///
/// Thread-safe: ``write(_:)``, ``close()`` and ``abort()`` may be called from any thread; they take the lock, which
/// also guards the descriptor against being closed under a writer. ``run()`` is the I/O thread's body.
final class SocketChannel: Sendable {
    private struct Shared {
        var pending: [UInt8] = []
        var closeRequested = false
        var aborted = false
        var finished = false
        /// Bytes read and handed to the stream that its consumer has not taken yet.
        var unconsumed = 0
    }

    let descriptor: Int32
    private let wakeup: WakeupPipe
    private let shared = Mutex(Shared())
    private let continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
    private let writeLimit: Int
    /// While this many bytes wait unconsumed, the thread stops reading (the kernel's buffer fills and TCP slows the peer).
    private let readLimit: Int
    private let linger: Duration

    /// Takes ownership of `descriptor` (non-blocking). `inbound` receives what the thread reads.
    init(
        descriptor: Int32, continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation,
        writeLimit: Int, readLimit: Int, linger: Duration
    ) throws(NetworkError) {
        self.descriptor = descriptor
        self.continuation = continuation
        self.writeLimit = writeLimit
        self.readLimit = readLimit
        self.linger = linger
        do {
            wakeup = try WakeupPipe()
        } catch {
            _ = Glibc.close(descriptor)
            throw error
        }
    }

    /// Sends `bytes` after everything written before. Tries the socket at once when nothing is queued; the rest
    /// is queued for the I/O thread.
    func write(_ bytes: [UInt8]) throws(NetworkError) {
        try shared.withLock { state throws(NetworkError) in
            guard !state.finished, !state.closeRequested, !state.aborted else { throw .closed }
            var offset = 0
            if state.pending.isEmpty {
                offset = try sendNow(bytes)
            }
            guard offset < bytes.count else { return }
            guard state.pending.count + bytes.count - offset <= writeLimit else { throw .writeBufferFull(limit: writeLimit) }
            state.pending.append(contentsOf: bytes[offset...])
            wakeup.wake()
        }
    }

    /// Flushes queued bytes, shuts down our sending side and lets the thread finish once the peer closes too (or
    /// after the linger time).
    func close() {
        shared.withLock { state in
            guard !state.finished else { return }
            state.closeRequested = true
            wakeup.wake()
        }
    }

    /// The consumer took `count` bytes off the stream; reading resumes when it was paused and is now below the limit.
    func consumed(_ count: Int) {
        shared.withLock { state in
            let wasPaused = state.unconsumed >= readLimit
            state.unconsumed -= count
            if wasPaused, state.unconsumed < readLimit, !state.finished { wakeup.wake() }
        }
    }

    /// Bytes read but not yet taken by the consumer.
    var unconsumedBytes: Int { shared.withLock { $0.unconsumed } }

    /// Drops everything and closes at once.
    func abort() {
        shared.withLock { state in
            guard !state.finished else { return }
            state.aborted = true
            wakeup.wake()
        }
    }

    /// The I/O thread's loop. Returns when the connection is over; closes the descriptor and finishes the stream.
    func run() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var failure: NetworkError?
        var shutdownSent = false
        var closeDeadline: ContinuousClock.Instant?
        loop: while true {
            let (wantWrite, closeRequested, aborted, wantRead) = shared.withLock {
                ($0.pending.count > 0, $0.closeRequested, $0.aborted, $0.unconsumed < readLimit)
            }
            if aborted { break }
            if closeRequested, !wantWrite, !shutdownSent {
                _ = shutdown(descriptor, Int32(SHUT_WR))
                shutdownSent = true
                closeDeadline = .now + linger
            }
            if let closeDeadline, ContinuousClock.now >= closeDeadline { break }
            // Paused reading leaves the socket out of the poll unless there is something to send: poll reports
            // a hang-up whatever was asked for, and that must not spin the loop while the consumer catches up.
            var fds = [
                pollfd(fd: wantRead || wantWrite ? descriptor : -1,
                       events: (wantRead ? Int16(POLLIN) : 0) | (wantWrite ? Int16(POLLOUT) : 0), revents: 0),
                pollfd(fd: wakeup.readEnd, events: Int16(POLLIN), revents: 0),
            ]
            let timeout = closeDeadline.map { Socket.milliseconds($0 - .now) } ?? -1
            if poll(&fds, 2, timeout) < 0 {
                if errno == EINTR { continue }
                failure = .system(operation: "poll", code: errno)
                break
            }
            if fds[1].revents != 0 { wakeup.drain() }
            let events = Int32(fds[0].revents)
            if events & Int32(POLLNVAL) != 0 { break }
            if wantRead, events & Int32(POLLIN | POLLHUP | POLLERR) != 0 {
                switch readAvailable(&buffer) {
                case .more: break
                case .endOfFile: break loop
                case .failed(let error):
                    failure = error
                    break loop
                }
            }
            if events & Int32(POLLOUT) != 0 {
                do {
                    try shared.withLock { state throws(NetworkError) in
                        let sent = try sendNow(state.pending)
                        state.pending.removeFirst(sent)
                    }
                } catch {
                    failure = error
                    break
                }
            }
        }
        shared.withLock { state in
            state.finished = true
            state.pending = []
            _ = Glibc.close(descriptor)
            wakeup.close()
        }
        if let failure { continuation.finish(throwing: failure) } else { continuation.finish() }
    }

    private enum ReadResult { case more, endOfFile, failed(NetworkError) }

    /// Reads until the socket has nothing more (bounded, so writes get their turn) or the consumer is too far behind.
    private func readAvailable(_ buffer: inout [UInt8]) -> ReadResult {
        for _ in 0..<16 {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                let paused = shared.withLock { state in
                    state.unconsumed += count
                    return state.unconsumed >= readLimit
                }
                continuation.yield(Array(buffer[0..<count]))
                if paused { return .more }
            } else if count == 0 {
                return .endOfFile
            } else {
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return .more
                case ECONNRESET: return .failed(.connectionReset)
                default: return .failed(.system(operation: "recv", code: errno))
                }
            }
        }
        return .more
    }

    /// Sends as much of `bytes` as the socket takes now; returns how much. Call with the lock held.
    private func sendNow(_ bytes: [UInt8]) throws(NetworkError) -> Int {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent >= 0 {
                offset += sent
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return offset
            case EPIPE, ECONNRESET: throw .connectionReset
            default: throw .system(operation: "send", code: errno)
            }
        }
        return offset
    }
}
