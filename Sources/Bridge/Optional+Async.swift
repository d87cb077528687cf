extension Optional where Wrapped: Sendable {
    /// `flatMap` with an async throwing transform.
    func asyncFlatMap<U>(isolation: isolated (any Actor)? = #isolation,
                         _ transform: (Wrapped) async throws -> U?) async rethrows -> U? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
