#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking pipe that wakes an I/O thread out of `poll()` (`pipe2` and `eventfd` are not visible through Glibc).
/// Thread-safe: ``wake()`` may be called from any thread; ``drain()`` only from the I/O thread. Closes both ends
/// in ``close()``.
struct WakeupPipe: Sendable {
    /// The end to poll for `POLLIN`.
    let readEnd: Int32
    private let writeEnd: Int32

    init() throws(NetworkError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw .system(operation: "pipe", code: errno) }
        for end in ends { Socket.makeNonBlocking(end) }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    /// Makes the next (or current) `poll()` return. A full pipe already guarantees that.
    func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe after `poll()` reported it readable.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }

    func close() {
        _ = Glibc.close(readEnd)
        _ = Glibc.close(writeEnd)
    }
}
