import Network

extension ServerCandidates {
    /// RFC 2782's order ("Usage rules"): priorities ascending; within one priority, repeatedly the record whose running
    /// sum of weights first reaches a random number in 0...sum of those left. The weight-0 records are placed first,
    /// so one is picked first only when that number is 0; records of equal standing keep their order. Pure.
    static func ordered(_ records: [(record: SRVRecord, directTLS: Bool)],
                        using generator: inout some RandomNumberGenerator) -> [ServerEndpoint] {
        var endpoints: [ServerEndpoint] = []
        for priority in Set(records.map(\.record.priority)).sorted() {
            let group = records.filter { $0.record.priority == priority }
            var left = group.filter { $0.record.weight == 0 } + group.filter { $0.record.weight != 0 }
            while !left.isEmpty {
                let pick = Int.random(in: 0...left.reduce(0) { $0 + Int($1.record.weight) }, using: &generator)
                var running = 0
                let index = left.firstIndex {
                    running += Int($0.record.weight)
                    return running >= pick
                } ?? 0
                let (record, directTLS) = left.remove(at: index)
                endpoints.append(ServerEndpoint(host: record.target, port: Int(record.port), directTLS: directTLS))
            }
        }
        return endpoints
    }
}
