import Network
import TestSupport
import Testing
import XMPPClient

/// Where a connection attempt goes, from the SRV records of the account's domain (RFC 6120 §3.2, RFC 2782,
/// XEP-0368): records and a seeded generator in, the endpoints in order out. No DNS.
@Suite struct ServerCandidatesTests {
    static let fallback = ServerEndpoint(host: "example.org", port: 5222, directTLS: false)

    func record(_ target: String, priority: UInt16 = 0, weight: UInt16 = 0, port: UInt16 = 5222) -> SRVRecord {
        SRVRecord(priority: priority, weight: weight, port: port, target: target)
    }

    func select(direct: Result<[SRVRecord], SRVLookupError> = .success([]), start: Result<[SRVRecord], SRVLookupError>? = .success([]),
                fallback: ServerEndpoint = fallback, seed: UInt64 = 1) -> ServerCandidates {
        var generator = SeededGenerator(seed: seed)
        return ServerCandidates.fromSRV(directTLS: direct, startTLS: start, fallback: fallback, using: &generator)
    }

    @Test func lowerPriorityFirstWhateverTheWeights() {
        for seed in UInt64(0)..<20 {
            let candidates = select(start: .success([record("c", priority: 30, weight: 100), record("a", priority: 10),
                                                     record("b", priority: 20, weight: 5)]), seed: seed)
            #expect(candidates.endpoints.map(\.host) == ["a", "b", "c"])
            #expect(candidates.source == .srv)
        }
    }

    @Test func withinAPriorityTheFirstPickFollowsTheWeights() {
        var first: [String: Int] = [:]
        let runs = 10_000
        for seed in UInt64(0)..<UInt64(runs) {
            let candidates = select(start: .success([record("ten", weight: 10), record("thirty", weight: 30), record("sixty", weight: 60)]),
                                    seed: seed)
            #expect(Set(candidates.endpoints.map(\.host)) == ["ten", "thirty", "sixty"], "each once")
            first[candidates.endpoints[0].host, default: 0] += 1
        }
        // RFC 2782: a number in 0...100 picks the first record whose running sum reaches it: 11, 30 and 60 of 101.
        for (host, share) in [("ten", 11.0 / 101), ("thirty", 30.0 / 101), ("sixty", 60.0 / 101)] {
            let seen = Double(first[host, default: 0]) / Double(runs)
            #expect(abs(seen - share) < 0.02, "\(host) first in \(seen) of the runs, expected about \(share)")
        }
    }

    @Test func aZeroWeightIsRarelyFirstButNeverLeftOut() {
        var zeroFirst = 0
        for seed in UInt64(0)..<2000 {
            let candidates = select(start: .success([record("heavy", weight: 100), record("zero", weight: 0)]), seed: seed)
            #expect(candidates.endpoints.map(\.host).sorted() == ["heavy", "zero"])
            if candidates.endpoints[0].host == "zero" { zeroFirst += 1 }
        }
        #expect(zeroFirst > 0 && zeroFirst < 60, "only when the number drawn is 0: about 1 in 101 (\(zeroFirst) of 2000)")
    }

    @Test func allZeroWeightsKeepTheirOrder() {
        let candidates = select(start: .success([record("a"), record("b"), record("c")]))
        #expect(candidates.endpoints.map(\.host) == ["a", "b", "c"])
    }

    @Test func bothServicesMergeIntoOneOrderEachWithItsKindOfTLS() {
        let candidates = select(direct: .success([record("tls.example.org", priority: 5, port: 5223)]),
                                start: .success([record("late.example.org", priority: 10), record("early.example.org", priority: 0)]))
        #expect(candidates.endpoints == [
            ServerEndpoint(host: "early.example.org", port: 5222, directTLS: false),
            ServerEndpoint(host: "tls.example.org", port: 5223, directTLS: true),
            ServerEndpoint(host: "late.example.org", port: 5222, directTLS: false),
        ])
    }

    @Test func aDotForDirectTLSLeavesTheSTARTTLSRecords() {
        let candidates = select(direct: .success([record(".", port: 0)]), start: .success([record("xmpp.example.org")]))
        #expect(candidates == ServerCandidates(source: .srv, endpoints: [ServerEndpoint(host: "xmpp.example.org", port: 5222, directTLS: false)]))
    }

    @Test func aDotMeansNoServiceAndNoFallbackToTheDomain() {
        // XEP-0368 §5: after a '.' for direct TLS, no A/AAAA fallback; a '.' for both (or one and nothing) leaves none.
        let dot = Result<[SRVRecord], SRVLookupError>.success([record(".", port: 0)])
        #expect(select(direct: dot, start: dot) == ServerCandidates(source: .noService(failures: []), endpoints: []))
        #expect(select(direct: dot, start: .success([])) == ServerCandidates(source: .noService(failures: []), endpoints: []))
        #expect(select(direct: .success([]), start: dot) == ServerCandidates(source: .noService(failures: []), endpoints: []))
        let timedOut = SRVLookupError.timedOut(name: "_xmpp-client._tcp.example.org")
        #expect(select(direct: dot, start: .failure(timedOut)) == ServerCandidates(source: .noService(failures: [timedOut]), endpoints: []))
    }

    @Test func aDotAmongOtherRecordsAndPortZeroAreSkipped() {
        let candidates = select(start: .success([record("."), record("zero.example.org", port: 0), record("xmpp.example.org", priority: 1)]))
        #expect(candidates.endpoints.map(\.host) == ["xmpp.example.org"])
    }

    @Test func directTLSOnlyUsesTheXMPPSRecordsThenItsOwnFallback() {
        let fallback = ServerEndpoint(host: "example.org", port: 5223, directTLS: true)
        let found = select(direct: .success([record("tls.example.org", port: 443)]), start: nil, fallback: fallback)
        #expect(found.endpoints == [ServerEndpoint(host: "tls.example.org", port: 443, directTLS: true)])
        let none = select(direct: .success([]), start: nil, fallback: fallback)
        #expect(none == ServerCandidates(source: .fallback(failures: []), endpoints: [fallback]))
    }

    @Test func noRecordsOrNoAnswersFallBackToTheDomain() {
        #expect(select() == ServerCandidates(source: .fallback(failures: []), endpoints: [Self.fallback]))
        let failed = SRVLookupError.failed(name: "_xmpps-client._tcp.example.org", reason: "SERVFAIL")
        let malformed = SRVLookupError.malformedAnswer(name: "_xmpp-client._tcp.example.org", reason: "a loop")
        #expect(select(direct: .failure(failed), start: .failure(malformed))
                == ServerCandidates(source: .fallback(failures: [failed, malformed]), endpoints: [Self.fallback]))
        #expect(select(direct: .failure(failed)) == ServerCandidates(source: .fallback(failures: [failed]), endpoints: [Self.fallback]))
    }

    @Test func oneFailedLookupDoesNotHideTheOthersRecords() {
        let failed = SRVLookupError.timedOut(name: "_xmpps-client._tcp.example.org")
        let candidates = select(direct: .failure(failed), start: .success([record("xmpp.example.org")]))
        #expect(candidates == ServerCandidates(source: .srv, endpoints: [ServerEndpoint(host: "xmpp.example.org", port: 5222, directTLS: false)]))
    }

    @Test func theServiceNames() {
        #expect(ServerCandidates.Service.directTLS.name(in: "example.org") == "_xmpps-client._tcp.example.org")
        #expect(ServerCandidates.Service.startTLS.name(in: "example.org") == "_xmpp-client._tcp.example.org")
    }
}
