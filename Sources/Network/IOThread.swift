#if canImport(Glibc)
import Glibc
#endif

/// Starts the dedicated POSIX threads that run blocking `poll()` loops (one per connection or listener), outside the
/// cooperative pool.
///
/// A plain `pthread_create`: Foundation's `Thread` does the same but lives only in full Foundation, which would pull
/// its ICU data into the binary. (The threads go unnamed: `pthread_setname_np` is not visible through Glibc.)
enum IOThread {
    /// Runs `body` on a new detached thread.
    /// - Throws: ``NetworkError/system(operation:code:)`` when the thread cannot be created (e.g. `EAGAIN`).
    static func start(_ body: @escaping @Sendable () -> Void) throws(NetworkError) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue().run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw .system(operation: "pthread_create", code: result)
        }
        pthread_detach(thread)
    }

    /// What the new thread runs, handed over as a retained pointer (a C start routine cannot capture).
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
