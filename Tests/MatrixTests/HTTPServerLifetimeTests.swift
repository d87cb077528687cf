@testable import MatrixAppService
import IsthmusCommon
import TestSupport
import Testing

/// The server's shared core is freed with the server, also when a request was handed to ``HTTPServer/requests`` and
/// never taken out (the consumer had stopped, or never started): the buffered request's responder must not keep the
/// core, and with it the stream that buffers the request, alive in a cycle (LeakSanitizer found one;
/// docs/reliability.md, "AddressSanitizer").
@Suite struct HTTPServerLifetimeTests {
    @Test func aRequestLeftInTheStreamDoesNotKeepTheServerAlive() async throws {
        var server: HTTPServer? = try HTTPServer(configuration: .init(host: "127.0.0.1", port: 0, maxBodyBytes: 16), logger: .disabled)
        let port = try #require(server).port
        weak let core = server?.core
        // Nobody consumes `requests`: this one stays in the stream's buffer.
        let waiting = try RawSocket.connect(port: port)
        try waiting.send("PUT /unread HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        try await eventually("the request handed to the stream") { core?.waitingRequests == 1 }
        // A sentinel answered on libmicrohttpd's one thread (a body over the limit is refused on its head): once its
        // answer is back, that thread has finished the callback that put the first request into the stream.
        let sentinel = try RawSocket.connect(port: port)
        try sentinel.send("PUT /big HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
        #expect(await sentinel.receiveUntilClosed(timeout: .seconds(TestTimeScale.scaled(10))).status == 413)

        server = nil   // its deinit closes it
        try await eventually("the server's core freed") { core == nil }
    }

    /// A request handed to the consumer and not yet answered when the server closes is answered 503 ("retry later"),
    /// and the answer goes out before the daemon stops (stopping at once dropped the connection without a status).
    @Test func closingAnswersAWaitingRequestWith503BeforeStopping() async throws {
        let server = try HTTPServer(configuration: .init(host: "127.0.0.1", port: 0, maxBodyBytes: 16), logger: .disabled)
        let waiting = try RawSocket.connect(port: server.port)
        try waiting.send("PUT /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        try await eventually("the request waits for its answer") { server.core.waitingRequests == 1 }
        server.close()
        #expect(await waiting.receiveUntilClosed(timeout: .seconds(TestTimeScale.scaled(10))).status == 503)
    }
}
