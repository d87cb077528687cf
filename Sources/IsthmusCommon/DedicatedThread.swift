#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A detached POSIX thread of the bridge's own, for work that blocks (SQLite and `fsync` in the store, `poll()` loops in
/// the network layer, libcurl's I/O loop) so that Swift's cooperative pool never does.
///
/// Plain `pthread_create`: Foundation's `Thread` does the same but lives only in full Foundation, which would pull its
/// ICU data into the binary.
public enum DedicatedThread {
    /// Starts a detached thread named `name` (Linux keeps 15 bytes of it) that runs `body`, then ends.
    /// - Throws: ``ThreadStartError`` when the system refuses another thread.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(ThreadStartError) {
        let start = Start(name: name, body: body)
        let context = Unmanaged.passRetained(start).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { context in
            let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
            DedicatedThread.nameCurrentThread(start.name)
            start.body()
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<Start>.fromOpaque(context).release()
            throw ThreadStartError(name: name, code: rc)
        }
        pthread_detach(thread)
    }

    /// The calling thread's name as the kernel reports it (`/proc/thread-self/comm`); empty if unreadable.
    public static func currentThreadName() -> String {
        let fd = open("/proc/thread-self/comm", O_RDONLY)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = read(fd, &bytes, bytes.count)
        return String(decoding: bytes.prefix(max(count, 0)), as: UTF8.self).trimmingSuffix("\n")
    }

    /// Names the calling thread (best effort). `pthread_setname_np` is hidden behind `_GNU_SOURCE` from Swift's Glibc,
    /// so this writes `/proc/thread-self/comm`, which is what it does.
    private static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(name.utf8.prefix(15))
        _ = write(fd, bytes, bytes.count)
    }

    /// What the new thread receives through `pthread_create`'s context pointer.
    private final class Start {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}

/// The system would not start a thread (`pthread_create` failed with `code`, an errno value).
public struct ThreadStartError: Error, Sendable, CustomStringConvertible {
    public var name: String
    public var code: Int32
    public var description: String { "cannot start thread '\(name)': error \(code)" }
}

private extension String {
    func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}
