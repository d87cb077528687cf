@testable import MatrixAppService
import Foundation
import IsthmusCommon
import Synchronization
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A streamed response over a real libmicrohttpd connection: the body arrives whole; a producer that fails mid-way
/// closes the connection (the client sees the end, short of the declared length), also when the client had stopped
/// reading meanwhile.
@Suite struct StreamingResponseLoopbackTests {
    func serve(_ produce: @escaping @Sendable (HTTPStreamingBody) -> Void, length: Int64) throws -> (HTTPServer, BackgroundTask) {
        let server = try HTTPServer(configuration: .init(host: "127.0.0.1", port: 0), logger: .disabled)
        let task = BackgroundTask {
            for await request in server.requests {
                let body = HTTPStreamingBody(length: length, capacity: 4096)
                request.respond(HTTPServerResponse(status: 200, stream: body))
                try? DedicatedThread.start(name: "test-producer") { produce(body) }
            }
        }
        return (server, task)
    }

    @Test func aFailedProducerClosesTheConnectionAfterWhatWasSent() async throws {
        let (server, task) = try serve({ body in
            let chunk = [UInt8](repeating: 1, count: 10_000)
            _ = chunk.withUnsafeBytes { body.write($0, stallTimeout: .seconds(5)) }
            body.finish(failed: true)
        }, length: 1_000_000)
        defer { server.close() }
        let client = try RawSocket.connect(port: server.port)
        try client.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
        let received = await client.receiveUntilClosed(timeout: .seconds(60))
        #expect(received.closed)
        #expect(received.text.hasPrefix("HTTP/1.1 200"))
        #expect(received.bytes.count < 1_000_000)
        await task.stop()
    }

    final class Flag: Sendable { let raised = Mutex(false) }

    @Test func aProducerStalledByAClientThatStoppedReadingEndsAndTheConnectionCloses() async throws {
        let gaveUp = Flag()
        let (server, task) = try serve({ body in
            let chunk = [UInt8](repeating: 2, count: 64 << 10)
            for _ in 0..<1000 {
                guard chunk.withUnsafeBytes({ body.write($0, stallTimeout: .milliseconds(500)) }) else { break }
            }
            body.finish(failed: true)
            gaveUp.raised.withLock { $0 = true }
        }, length: 64_000 << 10)
        defer { server.close() }
        let client = try RawSocket.connect(port: server.port)
        try client.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
        // The client reads nothing until the producer, blocked on the full buffer, gave up.
        try await eventually("the stalled producer giving up", timeout: 60) { gaveUp.raised.withLock { $0 } }
        let received = await client.receiveUntilClosed(timeout: .seconds(60))
        #expect(received.closed)
        #expect(received.bytes.count < 64_000 << 10)
        await task.stop()
    }
}
