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
        port = try RawSocket.bindToLoopback(fd)
        descriptor = fd
    }

    deinit { Glibc.close(descriptor) }
}
