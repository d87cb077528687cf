/// Runs an async operation (e.g. a service's `run()`) in a task this value owns: ``stop()`` cancels it and waits
/// for it to return. For tests that need a service running while they act on it.
public final class BackgroundTask: Sendable {
    private let task: Task<Void, Never>

    public init(_ operation: sending @escaping () async -> Void) {
        task = Task { await operation() }
    }

    deinit { task.cancel() }

    /// Waits until the operation returns by itself.
    public func finished() async { await task.value }

    /// Cancels the operation and waits until it returns.
    public func stop() async {
        task.cancel()
        await task.value
    }
}
