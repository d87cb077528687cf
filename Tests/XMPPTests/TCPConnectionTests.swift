import Network
import TestSupport
import Testing

/// The POSIX socket layer on loopback: order, end of file, refusal, writes after close.
@Suite struct TCPConnectionTests {
    @Test func bytesFlowBothWaysInOrder() async throws {
        let listener = try TCPListener()
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
        var accepted = listener.connections.makeAsyncIterator()
        let server = try #require(try await accepted.next())

        var expected: [UInt8] = []
        for index in 0..<2000 {
            let chunk = Array("message \(index);".utf8)
            expected += chunk
            try client.write(chunk)
        }
        try server.write(Array("bye".utf8))
        server.close()
        // The peer's end of file ends a connection (no half-open use): the client sees "bye", then the end.
        var reply: [UInt8] = []
        for try await chunk in client.inbound { reply += chunk }
        #expect(reply == Array("bye".utf8))
        var received: [UInt8] = []
        for try await chunk in server.inbound { received += chunk }
        #expect(received == expected)
        #expect(throws: NetworkError.closed) { try client.write([1]) }
        listener.close()
    }

    @Test func largeWritesAreQueuedAndDelivered() async throws {
        let listener = try TCPListener()
        let client = try await TCPConnection.connect(host: "localhost", port: listener.port)
        var accepted = listener.connections.makeAsyncIterator()
        let server = try #require(try await accepted.next())
        let big = (0..<(4 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try client.write(big)
        client.close()
        var count = 0
        var matches = true
        for try await chunk in server.inbound {
            for (offset, byte) in chunk.enumerated() where big[count + offset] != byte { matches = false }
            count += chunk.count
        }
        #expect(count == big.count)
        #expect(matches)
    }

    @Test func aConsumerThatFallsBehindSlowsThePeerInsteadOfBufferingWithoutEnd() async throws {
        let listener = try TCPListener()
        let readLimit = 256 * 1024
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port, readLimit: readLimit)
        var accepted = listener.connections.makeAsyncIterator()
        let server = try #require(try await accepted.next())
        // The client reads nothing yet: the server fills the kernel's buffers and then its own 16 MiB queue.
        let chunk = (0..<(1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var written = 0
        try await eventually("the server's write queue is full", timeout: 30) {
            do {
                try server.write(chunk)
                written += chunk.count
                return false
            } catch NetworkError.writeBufferFull {
                return true
            }
        }
        // One read's worth (64 KiB) may overshoot the limit; nothing like the megabytes the server wrote.
        #expect(client.bufferedInboundBytes <= readLimit + 64 * 1024)
        #expect(written > 16 * 1024 * 1024)
        server.close()
        var received = 0
        var matches = true
        for try await part in client.inbound {
            for (offset, byte) in part.enumerated() where chunk[(received + offset) % chunk.count] != byte { matches = false }
            received += part.count
        }
        #expect(received == written)
        #expect(matches)
        #expect(client.bufferedInboundBytes == 0)
        listener.close()
    }

    @Test func nothingListeningIsConnectionRefused() async throws {
        let reserved = try ReservedPort()
        let port = reserved.port
        await #expect(throws: NetworkError.connectionRefused(host: "127.0.0.1", port: port)) {
            _ = try await TCPConnection.connect(host: "127.0.0.1", port: port)
        }
    }

    @Test func writingAfterCloseThrows() async throws {
        let listener = try TCPListener()
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
        client.close()
        #expect(throws: NetworkError.closed) { try client.write([1]) }
    }

    @Test func peerAbortEndsTheInboundStream() async throws {
        let listener = try TCPListener()
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
        var accepted = listener.connections.makeAsyncIterator()
        let server = try #require(try await accepted.next())
        server.abort()
        var chunks = 0
        do {
            for try await _ in client.inbound { chunks += 1 }
        } catch {
            #expect(error as? NetworkError == .connectionReset)
        }
        #expect(chunks == 0)
    }
}
