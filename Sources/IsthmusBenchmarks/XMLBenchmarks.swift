/// XML stream benchmarks (placeholder until the XMPP link lands).
enum XMLBenchmarks {
    static func run(_ arguments: [String]) async throws {}
}
