import Network
import TestSupport
import Testing

/// The SRV lookup through glibc's resolver against a fake nameserver on loopback (``FakeDNSServer``): answers built
/// as wire bytes by hand, with name compression; NXDOMAIN and no data as no records; failures, silence and hostile
/// answers as typed errors, never a crash.
@Suite struct SRVResolverTests {
    static let name = "_xmpp-client._tcp.example.org"

    func lookup(_ answer: FakeDNSServer.Answer, timeout: Duration = .seconds(4)) async throws -> Result<[SRVRecord], SRVLookupError> {
        let server = try FakeDNSServer([Self.name: answer])
        defer { server.close() }
        do throws(SRVLookupError) {
            return .success(try await server.resolver.lookup(Self.name, timeout: timeout))
        } catch {
            return .failure(error)
        }
    }

    @Test func recordsComeBackAsSentWithCompressedTargetsExpanded() async throws {
        let records = [
            SRVRecord(priority: 10, weight: 60, port: 5222, target: "xmpp.example.org"),   // compressed: "xmpp" + pointer
            SRVRecord(priority: 20, weight: 0, port: 5223, target: "example.org"),         // a bare pointer into the question
            SRVRecord(priority: 5, weight: 1, port: 443, target: "tls.example.net"),       // no shared suffix: in full
        ]
        #expect(try await lookup(.records(records)) == .success(records))
    }

    @Test func theTargetsOfTheWireAreCompressed() throws {
        // The helper itself: what the parser is fed really uses pointers.
        let query = DNSQuery(id: 1, name: Self.name, type: DNSWire.typeSRV, question: [])
        #expect(DNSWire.name("xmpp.example.org", compressedAgainst: query) == [4] + Array("xmpp".utf8) + [0xC0, 12 + 13 + 5])
        #expect(DNSWire.name("tls.example.net", compressedAgainst: query).last == 0)
    }

    @Test func noSuchNameAndNoSRVDataAreNoRecords() async throws {
        #expect(try await lookup(.nameError) == .success([]))
        #expect(try await lookup(.records([])) == .success([]))
    }

    @Test func theRootTargetComesBackAsTheRoot() async throws {
        let result = try await lookup(.records([SRVRecord(priority: 0, weight: 0, port: 0, target: ".")]))   // one zero byte
        #expect(result == .success([SRVRecord(priority: 0, weight: 0, port: 0, target: ".")]))
    }

    @Test func aServerFailureIsAFailure() async throws {
        let result = try await lookup(.serverFailure)
        guard case .failure(.failed(let name, _)) = result else { Issue.record("\(result)"); return }
        #expect(name == Self.name)
    }

    /// The caller's timeout wins over the resolver's own waits (a second at least, then two), which would end in
    /// `.failed`: `.timedOut` says the timer finished the lookup first. (No wall-clock bound: under a loaded parallel
    /// run the awaiting task itself may resume late.)
    @Test func silenceTimesOutBeforeTheResolverGivesUp() async throws {
        let result = try await lookup(.silence, timeout: .milliseconds(300))
        #expect(result == .failure(.timedOut(name: Self.name)))
    }

    @Test func otherRecordTypesAreSkipped() async throws {
        let record = SRVRecord(priority: 1, weight: 1, port: 5222, target: "xmpp.example.org")
        let result = try await lookup(.bytes { query in
            DNSWire.reply(to: query, answers: [DNSWire.answer(type: DNSWire.typeCNAME, data: DNSWire.name("alias.example.org", compressedAgainst: query)),
                                               DNSWire.srv(record, for: query)])
        })
        #expect(result == .success([record]))
    }

    @Test func atMostTheCapOfRecordsIsUsed() async throws {
        let records = (0..<100).map { SRVRecord(priority: 0, weight: 1, port: 5222, target: "h\($0).example.org") }
        let result = try await lookup(.records(records))
        #expect(result == .success(Array(records.prefix(SRVResolver.maximumRecords))))
    }

    /// Hostile answers: each one refused as malformed (then the connection falls back), none crashes.
    @Test(arguments: HostileAnswer.allCases)
    func aHostileAnswerIsMalformed(_ hostile: HostileAnswer) async throws {
        let result = try await lookup(.bytes(hostile.reply))
        guard case .failure(.malformedAnswer(let name, let reason)) = result else {
            Issue.record("\(hostile): \(result)")
            return
        }
        #expect(name == Self.name)
        #expect(reason.hasPrefix(hostile.reason), "\(reason)")
    }

    @Test func theAnswerForAnotherNameIsNotTaken() async throws {
        let server = try FakeDNSServer(["_xmpp-client._tcp.example.org": .records([SRVRecord(priority: 0, weight: 0, port: 1, target: "a.example.org")])])
        defer { server.close() }
        #expect(try await server.resolver.lookup("_xmpps-client._tcp.example.org", timeout: .seconds(4)) == [])
        #expect(server.asked == ["_xmpps-client._tcp.example.org"])
    }
}

/// Broken replies a hostile or buggy nameserver might send.
enum HostileAnswer: CaseIterable, CustomTestStringConvertible {
    case compressionLoop, pointerPastTheEnd, countBeyondTheRecords, recordCutShort, recordTooShortForSRV, targetLongerThanItsRecord

    var testDescription: String { "\(self)" }

    /// How the resolver's reason for refusing it starts.
    var reason: String {
        switch self {
        case .compressionLoop, .pointerPastTheEnd: "an SRV target is not a name (a pointer out of the message or in a loop)"
        case .countBeyondTheRecords, .recordCutShort: "its sections do not fit its"
        case .recordTooShortForSRV: "an SRV record of 4 bytes"
        case .targetLongerThanItsRecord: "an SRV target runs past its record"
        }
    }

    var reply: @Sendable (DNSQuery) -> [UInt8] {
        switch self {
        case .compressionLoop:
            // The target is a pointer to itself.
            { query in DNSWire.reply(to: query, answers: [DNSWire.answer(type: DNSWire.typeSRV,
                                                                          data: [0, 1, 0, 1, 0x14, 0x66] + DNSWire.pointer(to: DNSWire.firstTargetOffset(in: query)))]) }
        case .pointerPastTheEnd:
            { query in DNSWire.reply(to: query, answers: [DNSWire.answer(type: DNSWire.typeSRV, data: [0, 1, 0, 1, 0x14, 0x66] + DNSWire.pointer(to: 0x3FFF))]) }
        case .countBeyondTheRecords:
            { query in DNSWire.reply(to: query, answers: [DNSWire.srv(SRVRecord(priority: 0, weight: 0, port: 5222, target: "a.example.org"), for: query)],
                                     answerCount: 0xFFFF) }
        case .recordCutShort:
            { query in Array(DNSWire.reply(to: query, answers: [DNSWire.srv(SRVRecord(priority: 0, weight: 0, port: 5222, target: "a.example.org"), for: query)])
                .dropLast(3)) }
        case .recordTooShortForSRV:
            { query in DNSWire.reply(to: query, answers: [DNSWire.answer(type: DNSWire.typeSRV, data: [0, 1, 0, 1])]) }
        case .targetLongerThanItsRecord:
            // The first record's data ends after its target's first length byte; the label it starts takes the next
            // record's owner (the root, a zero byte) and ends on its type's high zero byte: a name, but not its record's.
            { query in DNSWire.reply(to: query, answers: [DNSWire.answer(type: DNSWire.typeSRV, data: [0, 1, 0, 1, 0x14, 0x66, 1]),
                                                          DNSWire.answer(type: 1, data: [127, 0, 0, 1], owner: [0])]) }
        }
    }
}
