#if canImport(Glibc)
import Glibc
#endif

/// Plain POSIX socket helpers: resolve, connect with a deadline, listen. Blocking calls; used on I/O threads only.
enum Socket {
    /// Sets `O_NONBLOCK` and `FD_CLOEXEC`.
    static func makeNonBlocking(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        _ = fcntl(descriptor, F_SETFD, fcntl(descriptor, F_GETFD) | FD_CLOEXEC)
    }

    /// Resolves `host` and connects to the first address that accepts, within `timeout`. Blocks the calling thread.
    /// Returns a non-blocking descriptor with `TCP_NODELAY` set.
    static func connect(host: String, port: Int, timeout: Duration) throws(NetworkError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw .resolutionFailed(host: host, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        let deadline = ContinuousClock.now + timeout
        var lastError = NetworkError.connectionRefused(host: host, port: port)
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            do {
                return try connect(address.pointee, deadline: deadline, host: host, port: port)
            } catch {
                lastError = error
                if case .connectTimedOut = error { break }
            }
        }
        throw lastError
    }

    private static func connect(_ address: addrinfo, deadline: ContinuousClock.Instant, host: String, port: Int) throws(NetworkError) -> Int32 {
        let descriptor = socket(address.ai_family, address.ai_socktype, address.ai_protocol)
        guard descriptor >= 0 else { throw .system(operation: "socket", code: errno) }
        makeNonBlocking(descriptor)
        var yes: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        if Glibc.connect(descriptor, address.ai_addr, address.ai_addrlen) == 0 { return descriptor }
        guard errno == EINPROGRESS else {
            let code = errno
            _ = close(descriptor)
            throw code == ECONNREFUSED ? .connectionRefused(host: host, port: port) : .system(operation: "connect", code: code)
        }
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else {
                _ = close(descriptor)
                throw .connectTimedOut(host: host, port: port)
            }
            var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&entry, 1, milliseconds(remaining))
            if ready < 0, errno == EINTR { continue }
            if ready == 0 { continue }
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length)
            guard code == 0 else {
                _ = close(descriptor)
                throw code == ECONNREFUSED ? .connectionRefused(host: host, port: port) : .system(operation: "connect", code: code)
            }
            return descriptor
        }
    }

    /// A non-blocking listening socket on IPv4 `host:port` (`port` 0 picks a free one); returns it and its port.
    static func listen(host: String, port: Int) throws(NetworkError) -> (Int32, Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw .system(operation: "socket", code: errno) }
        var yes: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            _ = close(descriptor)
            throw .resolutionFailed(host: host, reason: "not an IPv4 address")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(descriptor, 128) == 0 else {
            let code = errno
            _ = close(descriptor)
            throw .system(operation: "bind/listen", code: code)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        makeNonBlocking(descriptor)
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// `duration` in whole milliseconds for `poll()`, rounded up, at least 0, at most a day.
    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        guard seconds < 86_400 else { return 86_400_000 }
        let millis = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(max(0, millis))
    }
}
