import IsthmusCommon

/// Starts the dedicated threads that run blocking `poll()` loops (one per connection or listener), outside the
/// cooperative pool, reporting failure as a ``NetworkError``.
enum IOThread {
    /// Runs `body` on a new detached thread named `isthmus-io`.
    /// - Throws: ``NetworkError/system(operation:code:)`` when the thread cannot be created (e.g. `EAGAIN`).
    static func start(_ body: @escaping @Sendable () -> Void) throws(NetworkError) {
        do {
            try DedicatedThread.start(name: "isthmus-io", body)
        } catch {
            throw .system(operation: "pthread_create", code: error.code)
        }
    }
}
