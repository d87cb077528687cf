import Foundation

/// A TCP connection: bytes in as one async stream of chunks, bytes out in order through ``write(_:)``.
///
/// Each connection has one I/O thread running `poll()` (no SwiftNIO here); it is the only reader. Generic: used by
/// the XMPP component, the c2s test client, fake servers and benchmarks. `Sendable`: any thread or actor may write;
/// exactly one task should iterate ``inbound``. Dropping the last reference aborts the connection.
///
/// Note: ``inbound`` is unbounded — a consumer slower than the peer lets chunks queue in memory. The XMPP layer
/// parses each chunk as it arrives, which keeps up with what Prosody can send.
public final class TCPConnection: Sendable {
    /// Chunks as read from the socket. Finishes at end of file (after ``close()``, or when the peer closes);
    /// throws ``NetworkError`` when the connection breaks.
    public let inbound: AsyncThrowingStream<[UInt8], any Error>
    private let channel: SocketChannel

    /// Default cap on unsent bytes (beyond it ``write(_:)`` throws rather than buffering without bound).
    public static let defaultWriteLimit = 16 * 1024 * 1024

    private init(descriptor: Int32, writeLimit: Int, linger: Duration) throws(NetworkError) {
        let (stream, continuation) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
        inbound = stream
        channel = try SocketChannel(descriptor: descriptor, continuation: continuation, writeLimit: writeLimit, linger: linger)
        let channel = self.channel
        continuation.onTermination = { _ in channel.abort() }
    }

    deinit { channel.abort() }

    /// Connects to `host:port` within `timeout` (name resolution included) and starts the I/O thread.
    public static func connect(
        host: String, port: Int, timeout: Duration = .seconds(10), writeLimit: Int = defaultWriteLimit,
        linger: Duration = .seconds(2)
    ) async throws(NetworkError) -> TCPConnection {
        let result: Result<TCPConnection, NetworkError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                let connection: TCPConnection
                do throws(NetworkError) {
                    let descriptor = try Socket.connect(host: host, port: port, timeout: timeout)
                    connection = try TCPConnection(descriptor: descriptor, writeLimit: writeLimit, linger: linger)
                } catch {
                    continuation.resume(returning: .failure(error))
                    return
                }
                let channel = connection.channel
                continuation.resume(returning: .success(connection))
                channel.run()
            }
            thread.name = "isthmus-tcp"
            thread.start()
        }
        return try result.get()
    }

    /// Wraps a descriptor accepted by a ``TCPListener`` and starts its I/O thread.
    static func accepted(descriptor: Int32) throws(NetworkError) -> TCPConnection {
        let connection = try TCPConnection(descriptor: descriptor, writeLimit: defaultWriteLimit, linger: .seconds(2))
        let channel = connection.channel
        let thread = Thread { channel.run() }
        thread.name = "isthmus-tcp"
        thread.start()
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
