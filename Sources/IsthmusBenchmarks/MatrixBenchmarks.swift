/// Appservice listener and client benchmarks (placeholder until the Matrix link lands).
enum MatrixBenchmarks {
    static func run(_ arguments: [String]) async throws {}
}
