import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP proxy in front of one port whose connections a test can cut, as a flaky network or a NAT timeout
/// would: ``cut()`` drops every connection through it and refuses new ones (accepted, then closed at once) until
/// ``restore()``. Both ends see the drop as the peer closing, and nothing in flight is delivered afterwards.
/// Blocking sockets on threads of its own (a test helper: simple beats clever); stopped by ``close()`` or deinit.
public final class TCPCutProxy: @unchecked Sendable {
    /// The port clients connect to.
    public let port: Int
    private let target: Int
    private let listener: Int32
    private let state = Mutex(State())

    private struct State {
        var down = false
        var closed = false
        var pairs: [Int: (client: Int32, server: Int32)] = [:]
        var nextPair = 0
        var accepted = 0
    }

    /// Listens on a free loopback port, forwarding to `127.0.0.1:target`.
    public init(forwardingTo target: Int) throws(RawSocketError) {
        self.target = target
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError(operation: "socket", code: errno) }
        port = try RawSocket.bindToLoopback(fd)
        guard listen(fd, 16) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw RawSocketError(operation: "listen", code: code)
        }
        listener = fd
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { close() }

    /// How many connections the proxy has accepted so far (refused ones while cut included).
    public var accepted: Int { state.withLock { $0.accepted } }

    /// Drops every open connection and refuses new ones until ``restore()``.
    public func cut() {
        let open = state.withLock { state -> [(client: Int32, server: Int32)] in
            state.down = true
            return Array(state.pairs.values)
        }
        for pair in open {
            shutdown(pair.client, Int32(SHUT_RDWR))
            shutdown(pair.server, Int32(SHUT_RDWR))
        }
    }

    /// Lets connections through again.
    public func restore() {
        state.withLock { $0.down = false }
    }

    /// Stops listening and drops every connection.
    public func close() {
        let first = state.withLock { state -> Bool in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        cut()
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return   // closed
            }
            let refuse = state.withLock { state -> Bool in
                state.accepted += 1
                return state.down || state.closed
            }
            guard !refuse, let server = connectTarget() else {
                Glibc.close(client)
                continue
            }
            let id = state.withLock { state -> Int in
                state.nextPair += 1
                state.pairs[state.nextPair] = (client, server)
                return state.nextPair
            }
            Thread.detachNewThread { [self] in pump(id: id, client: client, server: server) }
        }
    }

    private func connectTarget() -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = Self.loopback(port: target)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            Glibc.close(fd)
            return nil
        }
        return fd
    }

    /// Copies bytes both ways until either side closes or the pair is cut.
    private func pump(id: Int, client: Int32, server: Int32) {
        var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0), pollfd(fd: server, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        loop: while true {
            guard poll(&fds, 2, 1000) >= 0 || errno == EINTR else { break }
            if state.withLock({ $0.pairs[id] == nil || $0.down }) { break }
            for (index, entry) in fds.enumerated() where entry.revents != 0 {
                let from = entry.fd, to = index == 0 ? server : client
                let count = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break loop }
                var offset = 0
                while offset < count {
                    let sent = buffer[offset..<count].withUnsafeBytes { send(to, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    guard sent > 0 else { break loop }
                    offset += sent
                }
            }
        }
        state.withLock { _ = $0.pairs.removeValue(forKey: id) }
        shutdown(client, Int32(SHUT_RDWR))
        shutdown(server, Int32(SHUT_RDWR))
        Glibc.close(client)
        Glibc.close(server)
    }
}
