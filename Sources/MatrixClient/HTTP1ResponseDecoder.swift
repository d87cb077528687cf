/// Decodes HTTP/1.1 responses (RFC 9112) from bytes fed in pieces of any size. Pure value, no I/O: ``next()``
/// returns nil while it needs more bytes. Bodies: `Content-Length`, `Transfer-Encoding: chunked`, or (neither)
/// everything until the connection closes (``finish()``). Responses to `HEAD`, 1xx, 204 and 304 have no body;
/// interim 1xx responses are skipped.
struct HTTP1ResponseDecoder {
    struct Response: Sendable, Equatable {
        var status: Int
        /// Header names lowercased; the last value wins for repeated headers.
        var headers: [String: String]
        var body: [UInt8]
        /// Whether the connection may carry another request (HTTP/1.1 without `Connection: close`).
        var keepAlive: Bool
    }

    enum DecodeError: Error, Equatable, CustomStringConvertible {
        case malformed(String)
        case tooLarge(limit: Int)

        var description: String {
            switch self {
            case .malformed(let what): "malformed HTTP response: \(what)"
            case .tooLarge(let limit): "HTTP response larger than \(limit) bytes"
            }
        }
    }

    private enum State {
        case head
        case fixed(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
    }

    private let method: String
    private let limit: Int
    private var buffer: [UInt8] = []
    private var offset = 0
    private var state = State.head
    private var response = Response(status: 0, headers: [:], body: [], keepAlive: true)

    /// A decoder for the answer to a `method` request; bodies above `limit` bytes are refused.
    init(method: String, limit: Int = 64 << 20) {
        self.method = method
        self.limit = limit
    }

    /// Bytes received and not yet consumed by a complete response.
    var unconsumedBytes: Int { buffer.count - offset }

    mutating func feed(_ bytes: some Sequence<UInt8>) {
        if offset > 4096, offset * 2 > buffer.count {
            buffer.removeFirst(offset)
            offset = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The complete response, or nil when more bytes are needed.
    mutating func next() throws(DecodeError) -> Response? {
        while true {
            switch state {
            case .head:
                guard let end = find([13, 10, 13, 10]) else {
                    if unconsumedBytes > 64 * 1024 { throw .malformed("header section too long") }
                    return nil
                }
                try parseHead(buffer[offset..<end])
                offset = end + 4
                if (100..<200).contains(response.status) {  // interim: skip it and read the real one
                    response = Response(status: 0, headers: [:], body: [], keepAlive: true)
                    continue
                }
                state = try bodyState()
            case .fixed(let remaining):
                let take = min(remaining, unconsumedBytes)
                response.body.append(contentsOf: buffer[offset..<(offset + take)])
                offset += take
                if remaining - take > 0 {
                    state = .fixed(remaining: remaining - take)
                    return nil
                }
                return complete()
            case .chunkSize:
                guard let end = find([13, 10]) else { return nil }
                let line = String(decoding: buffer[offset..<end], as: UTF8.self)
                let digits = line.split(separator: ";", maxSplits: 1).first.map { $0.trimmingPrefixAndSuffixSpaces() } ?? ""
                guard let size = Int(digits, radix: 16), size >= 0 else { throw .malformed("chunk size '\(line)'") }
                offset = end + 2
                guard response.body.count + size <= limit else { throw .tooLarge(limit: limit) }
                state = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                let take = min(remaining, unconsumedBytes)
                response.body.append(contentsOf: buffer[offset..<(offset + take)])
                offset += take
                if remaining - take > 0 {
                    state = .chunkData(remaining: remaining - take)
                    return nil
                }
                state = .chunkDataEnd
            case .chunkDataEnd:
                guard unconsumedBytes >= 2 else { return nil }
                guard buffer[offset] == 13, buffer[offset + 1] == 10 else { throw .malformed("chunk not followed by CRLF") }
                offset += 2
                state = .chunkSize
            case .trailers:
                guard let end = find([13, 10]) else { return nil }
                let empty = end == offset
                offset = end + 2
                if empty { return complete() }
            case .untilClose:
                response.body.append(contentsOf: buffer[offset...])
                offset = buffer.count
                guard response.body.count <= limit else { throw .tooLarge(limit: limit) }
                return nil
            }
        }
    }

    /// The connection closed: the response whose body runs until the close, if that is what was being read.
    mutating func finish() throws(DecodeError) -> Response? {
        guard case .untilClose = state else {
            if case .head = state, unconsumedBytes == 0 { return nil }
            throw .malformed("connection closed in the middle of a response")
        }
        _ = try next()
        response.keepAlive = false
        return complete()
    }

    private mutating func complete() -> Response {
        let done = response
        response = Response(status: 0, headers: [:], body: [], keepAlive: true)
        state = .head
        return done
    }

    private mutating func parseHead(_ bytes: ArraySlice<UInt8>) throws(DecodeError) {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)[...]
        guard let statusLine = lines.popFirst() else { throw .malformed("no status line") }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]), (100...999).contains(status) else {
            throw .malformed("status line '\(statusLine.prefix(80))'")
        }
        response.status = status
        response.keepAlive = parts[0] != "HTTP/1.0"
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw .malformed("header line '\(line.prefix(80))'") }
            let name = line[..<colon].lowercased()
            let value = String(line[line.index(after: colon)...].trimmingPrefixAndSuffixSpaces())
            response.headers[name] = value
        }
        if let connection = response.headers["connection"]?.lowercased() {
            if connection.contains("close") { response.keepAlive = false }
            if connection.contains("keep-alive") { response.keepAlive = true }
        }
    }

    private func bodyState() throws(DecodeError) -> State {
        if method == "HEAD" || response.status == 204 || response.status == 304 { return .fixed(remaining: 0) }
        if let encoding = response.headers["transfer-encoding"]?.lowercased(), encoding.contains("chunked") { return .chunkSize }
        if let length = response.headers["content-length"] {
            guard let count = Int(length), count >= 0 else { throw .malformed("content-length '\(length)'") }
            guard count <= limit else { throw .tooLarge(limit: limit) }
            return .fixed(remaining: count)
        }
        return .untilClose
    }

    private func find(_ needle: [UInt8]) -> Int? {
        guard unconsumedBytes >= needle.count else { return nil }
        var index = offset
        let last = buffer.count - needle.count
        while index <= last {
            if buffer[index] == needle[0] {
                var match = true
                for step in 1..<needle.count where buffer[index + step] != needle[step] {
                    match = false
                    break
                }
                if match { return index }
            }
            index += 1
        }
        return nil
    }
}

extension Substring {
    fileprivate func trimmingPrefixAndSuffixSpaces() -> Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
