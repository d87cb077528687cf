
/// A TCP connection: bytes in as one async stream of chunks, bytes out in order through ``write(_:)``.
///
/// Each connection has one I/O thread running `poll()` (no SwiftNIO here); it is the only reader. Generic: used by
/// the XMPP component, the c2s test client, fake servers and benchmarks. `Sendable`: any thread or actor may write;
/// exactly one task should iterate ``inbound``. Dropping the last reference aborts the connection.
///
/// Back-pressure: while the consumer of ``inbound`` is more than a read limit behind, the I/O thread stops reading, the
/// kernel's receive buffer fills and TCP slows the peer — a flood costs bounded memory instead of queueing without end.
public final class TCPConnection: Sendable {
    /// Chunks as read from the socket. Finishes at end of file (after ``close()``, or when the peer closes);
    /// throws ``NetworkError`` when the connection breaks.
    public let inbound: TCPInbound
    private let channel: SocketChannel

    /// Default cap on unsent bytes (beyond it ``write(_:)`` throws rather than buffering without bound).
    public static let defaultWriteLimit = 16 * 1024 * 1024
    /// Default cap on bytes read but not yet consumed (beyond it reading pauses).
    public static let defaultReadLimit = 4 * 1024 * 1024

    private init(descriptor: Int32, writeLimit: Int, readLimit: Int, linger: Duration) throws(NetworkError) {
        let (stream, continuation) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
        channel = try SocketChannel(descriptor: descriptor, continuation: continuation, writeLimit: writeLimit,
                                    readLimit: readLimit, linger: linger)
        inbound = TCPInbound(stream: stream, channel: channel)
        let channel = self.channel
        continuation.onTermination = { _ in channel.abort() }
    }

    /// Bytes read from the socket that the consumer of ``inbound`` has not taken yet (at most about the read limit).
    public var bufferedInboundBytes: Int { channel.unconsumedBytes }

    deinit { channel.abort() }

    /// Connects to `host:port` within `timeout` (name resolution included) and starts the I/O thread.
    public static func connect(
        host: String, port: Int, timeout: Duration = .seconds(10), writeLimit: Int = defaultWriteLimit,
        readLimit: Int = defaultReadLimit, linger: Duration = .seconds(2)
    ) async throws(NetworkError) -> TCPConnection {
        let result: Result<TCPConnection, NetworkError> = await withCheckedContinuation { continuation in
            do throws(NetworkError) {
                try IOThread.start {
                    let connection: TCPConnection
                    do throws(NetworkError) {
                        let descriptor = try Socket.connect(host: host, port: port, timeout: timeout)
                        connection = try TCPConnection(descriptor: descriptor, writeLimit: writeLimit, readLimit: readLimit, linger: linger)
                    } catch {
                        continuation.resume(returning: .failure(error))
                        return
                    }
                    let channel = connection.channel
                    continuation.resume(returning: .success(connection))
                    channel.run()
                }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        return try result.get()
    }

    /// Wraps a descriptor accepted by a ``TCPListener`` and starts its I/O thread.
    static func accepted(descriptor: Int32) throws(NetworkError) -> TCPConnection {
        let connection = try TCPConnection(descriptor: descriptor, writeLimit: defaultWriteLimit, readLimit: defaultReadLimit,
                                           linger: .seconds(2))
        let channel = connection.channel
        do {
            try IOThread.start { channel.run() }
        } catch {
            // Without its thread the channel would never close the descriptor: close it here.
            channel.abort()
            channel.run()
            throw error
        }
        return connection
    }

    /// Queues `bytes` after everything written before (often sent at once, from the calling thread).
    /// - Throws: ``NetworkError/closed`` after ``close()``/``abort()`` or once the connection is over;
    ///   ``NetworkError/writeBufferFull(limit:)`` when the peer does not read.
    public func write(_ bytes: [UInt8]) throws(NetworkError) {
        try channel.write(bytes)
    }

    /// Graceful close: sends what is queued, then shuts down our side; ``inbound`` finishes when the peer closes
    /// too (or after the linger time).
    public func close() { channel.close() }

    /// Closes at once, dropping unsent bytes.
    public func abort() { channel.abort() }
}

/// The chunks a ``TCPConnection`` reads, in order; taking one tells the connection it may read more (back-pressure).
/// Iterate from one task.
public struct TCPInbound: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    let stream: AsyncThrowingStream<[UInt8], any Error>
    let channel: SocketChannel

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<[UInt8], any Error>.AsyncIterator
        let channel: SocketChannel

        public mutating func next() async throws -> [UInt8]? {
            guard let chunk = try await base.next() else { return nil }
            channel.consumed(chunk.count)
            return chunk
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), channel: channel)
    }
}
