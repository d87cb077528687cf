@testable import MatrixClient
import Testing

/// The HTTP/1.1 response decoder, byte by byte and all at once (SwiftNIO's decoder-verifier habit).
@Suite struct HTTP1ResponseDecoderTests {
    static let fixed = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 16\r\n\r\n{\"event_id\":\"$\"}"
    static let chunked = "HTTP/1.1 429 Too Many Requests\r\nTransfer-Encoding: chunked\r\nRetry-After: 2\r\n\r\n"
        + "5;ext=1\r\n{\"a\":\r\n3\r\n 1}\r\n0\r\nX-Trailer: y\r\n\r\n"

    /// Feeds `text` in pieces of `size` bytes and collects every response.
    func decode(_ text: String, pieces size: Int, method: String = "GET") throws -> [HTTP1ResponseDecoder.Response] {
        var decoder = HTTP1ResponseDecoder(method: method)
        var responses: [HTTP1ResponseDecoder.Response] = []
        let bytes = Array(text.utf8)
        for start in stride(from: 0, to: bytes.count, by: size) {
            decoder.feed(bytes[start..<min(bytes.count, start + size)])
            while let response = try decoder.next() { responses.append(response) }
        }
        if let last = try decoder.finish() { responses.append(last) }
        return responses
    }

    @Test(arguments: [1, 2, 7, 4096])
    func contentLengthAndChunkedBodiesInAnyPieces(size: Int) throws {
        let responses = try decode(Self.fixed + Self.chunked + Self.fixed, pieces: size)
        #expect(responses.map(\.status) == [200, 429, 200])
        #expect(responses.map { String(decoding: $0.body, as: UTF8.self) } == [#"{"event_id":"$"}"#, #"{"a": 1}"#, #"{"event_id":"$"}"#])
        #expect(responses[1].headers["retry-after"] == "2")
        #expect(responses.allSatisfy { $0.keepAlive })
    }

    @Test func aBodyWithoutLengthRunsUntilTheConnectionCloses() throws {
        let responses = try decode("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{}", pieces: 3)
        #expect(responses.count == 1 && responses[0].body == Array("{}".utf8) && !responses[0].keepAlive)
    }

    @Test func noBodyForHeadNoContentAndInterimResponses() throws {
        let head = try decode("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", pieces: 4, method: "HEAD")
        #expect(head.map(\.body) == [[]])
        let responses = try decode("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", pieces: 5)
        #expect(responses.map(\.status) == [204])
        let old = try decode("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", pieces: 9)
        #expect(old.map(\.keepAlive) == [false])
    }

    @Test func refusesWhatIsNotHTTPAndTruncatedAnswers() {
        #expect(throws: HTTP1ResponseDecoder.DecodeError.self) { try decode("SSH-2.0-OpenSSH\r\n\r\n", pieces: 64) }
        #expect(throws: HTTP1ResponseDecoder.DecodeError.self) { try decode("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}", pieces: 64) }
        #expect(throws: HTTP1ResponseDecoder.DecodeError.self) {
            try decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", pieces: 64)
        }
    }
}
