import Network

/// A minimal HTTP/1.1 client on one keep-alive connection, one request at a time, over the project's own TCP layer:
/// cheap per request (benchmarks push transactions with it) and able to send what a real client would not (tests of
/// the listener's refusals). Responses must carry `Content-Length` (libmicrohttpd's do). Not thread-safe: one task
/// owns it. Shared by the tests and `isthmus-bench`.
public final class RawHTTPClient {
    private let connection: TCPConnection
    private var inbound: TCPInbound.AsyncIterator
    private var buffer: [UInt8] = []
    private let host: String

    /// The server's answer could not be read.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Connects to `host:port`. Does network I/O.
    public init(host: String = "127.0.0.1", port: Int) async throws {
        connection = try await TCPConnection.connect(host: host, port: port)
        inbound = connection.inbound.makeAsyncIterator()
        self.host = "\(host):\(port)"
    }

    deinit { connection.abort() }

    /// Writes the request (calling `willSend` just before the bytes go out) and returns the status and body.
    ///
    /// `expectContinue`: with a body, send the head with `Expect: 100-continue` and the body only after the server's
    /// `100 Continue` (RFC 9110 §10.1.1), as real clients do — a server that refuses on the head answers at once and
    /// closes, and a body already on its way would make it reset the connection before the answer is read.
    public func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = [],
                        expectContinue: Bool = false, willSend: () -> Void = {}) async throws -> (status: Int, body: [UInt8]) {
        let waitForContinue = expectContinue && !body.isEmpty
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if waitForContinue { head += "Expect: 100-continue\r\n" }
        head += "\r\n"
        willSend()
        guard waitForContinue else {
            try connection.write(Array(head.utf8) + body)
            return try await readResponse()
        }
        try connection.write(Array(head.utf8))
        let interim = try await readResponse()
        guard interim.status == 100 else { return interim }
        try connection.write(body)
        return try await readResponse()
    }

    private func readResponse() async throws -> (status: Int, body: [UInt8]) {
        var headerEnd: Int?
        while true {
            headerEnd = Self.find([13, 10, 13, 10], in: buffer)
            if headerEnd != nil { break }
            try await fill()
        }
        let headText = String(decoding: buffer[..<headerEnd!], as: UTF8.self)
        let lines = headText.split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.split(separator: " ").count >= 2,
              let status = Int(statusLine.split(separator: " ")[1]) else { throw Failure(description: "bad status line") }
        var length = 0
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length" {
                length = Int(parts[1].trimmingPrefix(" ")) ?? 0
            }
        }
        let bodyStart = headerEnd! + 4
        while buffer.count < bodyStart + length { try await fill() }
        let body = Array(buffer[bodyStart..<(bodyStart + length)])
        buffer.removeFirst(bodyStart + length)
        return (status, body)
    }

    private func fill() async throws {
        guard let chunk = try await inbound.next() else { throw Failure(description: "connection closed") }
        buffer += chunk
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = 0
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0], haystack[index + 1] == needle[1], haystack[index + 2] == needle[2],
               haystack[index + 3] == needle[3] {
                return index
            }
            index += 1
        }
        return nil
    }
}
