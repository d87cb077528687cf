#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP port with nothing listening on it, held for the test: a socket bound to it without `listen` and
/// without `SO_REUSEADDR`, so a connection to it is refused and no other socket — another test's fake server in the
/// same parallel run — can bind it meanwhile (a port taken from a closed listener could be handed out again at once).
/// Released on deinit.
public final class ReservedPort: Sendable {
    public let port: Int
    private let descriptor: Int32

    public init() throws(RawSocketError) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError(operation: "socket", code: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, named == 0 else {
            let code = errno
            Glibc.close(fd)
            throw RawSocketError(operation: "bind", code: code)
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { Glibc.close(descriptor) }
}
