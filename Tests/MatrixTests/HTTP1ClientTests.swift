import Foundation
@testable import MatrixClient
import Network
import Testing

/// ``HTTP1Client`` against a raw loopback server that closes every connection after one answer without saying so
/// (as a homeserver closing an idle keep-alive connection does).
@Suite struct HTTP1ClientTests {
    @Test func aRequestOnAConnectionTheServerClosedIsSentAgainOnANewOne() async throws {
        let listener = try TCPListener()
        let accepted = Task {
            var count = 0
            for try await connection in listener.connections {
                count += 1
                let number = count
                Task {
                    var request: [UInt8] = []
                    for try await chunk in connection.inbound {
                        request += chunk
                        if String(decoding: request, as: UTF8.self).contains("\r\n\r\n") { break }
                    }
                    let body = "{\"connection\":\(number)}"
                    try connection.write(Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8))
                    try await Task.sleep(for: .milliseconds(20))
                    connection.close()
                }
            }
        }
        defer {
            listener.close()
            accepted.cancel()
        }
        let client = HTTP1Client(host: "127.0.0.1", port: listener.port, maxConnections: 4)
        let first = try await client.send(method: "GET", target: "/a", headers: [], body: nil, timeout: .seconds(5))
        try await Task.sleep(for: .milliseconds(100))  // the server has closed that connection by now
        let second = try await client.send(method: "GET", target: "/b", headers: [], body: nil, timeout: .seconds(5))
        #expect(String(decoding: first.body, as: UTF8.self) == #"{"connection":1}"#)
        #expect(String(decoding: second.body, as: UTF8.self) == #"{"connection":2}"#)
    }

    @Test func nothingListeningIsConnectionRefused() async throws {
        let port = try { () throws -> Int in
            let probe = try TCPListener()
            defer { probe.close() }
            return probe.port
        }()
        let client = HTTP1Client(host: "127.0.0.1", port: port, maxConnections: 1)
        await #expect {
            _ = try await client.send(method: "GET", target: "/", headers: [], body: nil, timeout: .seconds(5))
        } throws: { error in
            if case HTTP1Client.Failure.connectionRefused = error { true } else { false }
        }
    }
}
