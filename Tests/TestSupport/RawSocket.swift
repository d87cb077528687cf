import Foundation
import IsthmusFakes
#if canImport(Glibc)
import Glibc
#endif

/// Why a ``RawSocket`` call failed.
public struct RawSocketError: Error, CustomStringConvertible {
    public var operation: String
    public var code: Int32
    public var description: String { "\(operation) failed: \(String(cString: strerror(code)))" }
}

/// A plain TCP client socket on loopback for tests that must choose exactly which bytes go out and when — a
/// request head without its body, a connection that sends nothing, a head trickled byte by byte — which
/// ``RawHTTP`` (whole requests only) cannot do. Blocking calls with deadlines (`poll`), no thread of its own; closed on deinit.
public final class RawSocket: @unchecked Sendable {
    /// The descriptor (owned).
    public let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { Glibc.close(descriptor) }

    /// Connects to `127.0.0.1:port`. With `waitUpTo` nil, returns as soon as the connection is initiated (it may
    /// still sit in the server's backlog); otherwise waits that long for it to be established, then fails.
    public static func connect(port: Int, waitUpTo timeout: Duration? = .seconds(5)) throws(RawSocketError) -> RawSocket {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError(operation: "socket", code: errno) }
        let raw = RawSocket(descriptor: fd)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result != 0 else { return raw }
        guard errno == EINPROGRESS else { throw RawSocketError(operation: "connect", code: errno) }
        guard let timeout else { return raw }
        guard raw.wait(for: Int16(POLLOUT), timeout: timeout) else { throw RawSocketError(operation: "connect", code: ETIMEDOUT) }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else { throw RawSocketError(operation: "connect", code: error) }
        return raw
    }

    /// Sends all of `text` (UTF-8) within `timeout`.
    public func send(_ text: String, timeout: Duration = .seconds(5)) throws(RawSocketError) {
        try send(Array(text.utf8), timeout: timeout)
    }

    /// Sends all of `bytes` within `timeout`; a peer that closed is an error (EPIPE/ECONNRESET), never SIGPIPE.
    public func send(_ bytes: [UInt8], timeout: Duration = .seconds(5)) throws(RawSocketError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent > 0 { offset += sent; continue }
            guard sent < 0, errno == EAGAIN || errno == EWOULDBLOCK else { throw RawSocketError(operation: "send", code: sent == 0 ? EPIPE : errno) }
            guard wait(for: Int16(POLLOUT), timeout: timeout) else { throw RawSocketError(operation: "send", code: ETIMEDOUT) }
        }
    }

    /// What ``receiveUntilClosed(timeout:)`` got.
    public struct Received: Sendable {
        /// Every byte read.
        public var bytes: [UInt8]
        /// Whether the peer closed (end of stream or reset) before the deadline.
        public var closed: Bool
        public var text: String { String(decoding: bytes, as: UTF8.self) }
        /// The status code of an HTTP response at the start of ``bytes``.
        public var status: Int? {
            let line = text.split(separator: "\r\n", maxSplits: 1).first ?? ""
            let parts = line.split(separator: " ")
            return parts.count >= 2 && parts[0].hasPrefix("HTTP/") ? Int(parts[1]) : nil
        }
        /// The body of an HTTP response in ``bytes`` (what follows the blank line).
        public var body: Data {
            guard let range = text.range(of: "\r\n\r\n") else { return Data() }
            return Data(text[range.upperBound...].utf8)
        }
        /// The `errcode` of a Matrix error body.
        public var errcode: String? {
            struct Body: Decodable { var errcode: String }
            return (try? JSONDecoder().decode(Body.self, from: body))?.errcode
        }
    }

    /// The first bytes the peer sent, left unread (`MSG_PEEK`), once any arrived within `timeout`; empty if none did.
    public func peek(upTo count: Int = 64, timeout: Duration = .seconds(5)) -> [UInt8] {
        guard wait(for: Int16(POLLIN), timeout: timeout) else { return [] }
        var buffer = [UInt8](repeating: 0, count: count)
        let received = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_PEEK)) }
        return received > 0 ? Array(buffer[..<received]) : []
    }

    /// ``receiveUntilClosed(timeout:)`` on a thread of its own, for async code. A blocking read on the cooperative pool
    /// holds one of its threads, two on a 2-core machine: two such reads at once (parallel tests) left the servers under
    /// test no thread to answer on, and each waited its whole timeout out (seen as `AppServiceListenerLoopbackTests`
    /// and `StreamingResponseLoopbackTests` failing together after 60 s).
    public func receiveUntilClosed(timeout: Duration = .seconds(5)) async -> Received {
        (try? await onOwnThread { self.receiveUntilClosed(timeout: timeout) as Received }) ?? Received(bytes: [], closed: false)
    }

    /// Reads until the peer closes the connection or `timeout` passes, whichever comes first. Blocks the calling thread:
    /// async code uses the async overload.
    public func receiveUntilClosed(timeout: Duration = .seconds(5)) -> Received {
        let deadline = ContinuousClock.now + timeout
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 { received.append(contentsOf: buffer[..<count]); continue }
            if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { return Received(bytes: received, closed: true) }
            let left = deadline - ContinuousClock.now
            guard left > .zero, wait(for: Int16(POLLIN), timeout: left) else { return Received(bytes: received, closed: false) }
        }
    }

    /// Binds `descriptor` (a fresh IPv4 socket) to 127.0.0.1 on a port the system picks, and returns the port; the
    /// descriptor is closed when that fails.
    public static func bindToLoopback(_ descriptor: Int32) throws(RawSocketError) -> Int {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, named == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw RawSocketError(operation: "bind", code: code)
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Waits until `events` are possible or the peer hung up; false after `timeout`.
    private func wait(for events: Int16, timeout: Duration) -> Bool {
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        return poll(&entry, 1, max(1, milliseconds)) > 0
    }
}
