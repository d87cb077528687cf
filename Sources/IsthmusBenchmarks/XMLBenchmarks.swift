import Foundation
import IsthmusCommon
import XMLStream
import XMPP

/// `isthmus-bench xml [--count N] [--chunk BYTES]`: stanzas per second through the XML stream parser (bytes to
/// elements, and on to typed stanzas) and the serializer (typed stanzas to bytes). Prints figures; asserts nothing.
///
/// The stanza is a typical MUC reflection (body, stanza-id, origin-id, occupant-id), fed in socket-sized chunks.
enum XMLBenchmarks {
    static func run(_ arguments: [String]) async throws {
        let count = option("--count", in: arguments) ?? 200_000
        let chunkSize = option("--chunk", in: arguments) ?? 4096
        let message = sampleMessage()
        let stanzaBytes = XMLSerializer.bytes(of: message.element)
        var stream = Array(("<stream:stream xmlns='jabber:component:accept' xmlns:stream='http://etherx.jabber.org/streams' "
            + "id='bench' from='bridge.localhost'>").utf8)
        stream.reserveCapacity(stream.count + stanzaBytes.count * count)
        for _ in 0..<count { stream += stanzaBytes }
        let chunks = stride(from: 0, to: stream.count, by: chunkSize).map { Array(stream[$0..<min(stream.count, $0 + chunkSize)]) }
        StandardStreams.writeOutput("xml: \(count) stanzas of \(stanzaBytes.count) bytes (\(stream.count / 1_048_576) MiB), fed in \(chunkSize)-byte chunks\n")

        // Warm-up on a slice, so one-time costs (libxml2 init, allocator) are not measured.
        _ = try parse(Array(chunks.prefix(64)), typed: true)

        let (elements, parseTime) = try measure { try parse(chunks, typed: false) }
        report("parse (bytes → elements)", count: elements, bytes: stream.count, time: parseTime)
        let (stanzas, typedTime) = try measure { try parse(chunks, typed: true) }
        report("parse + typed (bytes → Stanza)", count: stanzas, bytes: stream.count, time: typedTime)

        let (written, serializeTime) = measure {
            var total = 0
            for _ in 0..<count { total += XMLSerializer.bytes(of: message.element).count }
            return total
        }
        report("serialize (Message → bytes)", count: count, bytes: written, time: serializeTime)
        let element = message.element
        let (rawWritten, rawTime) = measure {
            var total = 0
            for _ in 0..<count { total += XMLSerializer.bytes(of: element).count }
            return total
        }
        report("serialize (element → bytes)", count: count, bytes: rawWritten, time: rawTime)
    }

    /// Parses every chunk; returns the number of stanzas seen.
    private static func parse(_ chunks: [[UInt8]], typed: Bool) throws -> Int {
        let parser = XMLStreamParser()
        var events: [XMLStreamEvent] = []
        var stanzas = 0
        for chunk in chunks {
            try parser.feed(chunk, into: &events)
            for case .element(let element) in events {
                if typed { _ = try Stanza(element: element) }
                stanzas += 1
            }
            events.removeAll(keepingCapacity: true)
        }
        return stanzas
    }

    private static func sampleMessage() -> Message {
        let room = JID("room@conference.localhost")!
        return Message(
            type: .groupchat, from: JID("room@conference.localhost/alice"), to: JID("bot@bridge.localhost/isthmus"),
            id: StanzaAttributeID("3f2a9c0e-6b1d-4f7e-9a55-1c2d3e4f5a6b"),
            body: "Hello everyone! Is the meeting still at 3 pm? Bring the <slides> & notes, please 🙂",
            stanzaIDs: [AssignedStanzaID(id: StanzaID("a1b2c3d4-e5f6-4789-abcd-ef0123456789")!, by: room)],
            originID: OriginID("3f2a9c0e-6b1d-4f7e-9a55-1c2d3e4f5a6b"), occupantID: OccupantID("dGhpcyBpcyBhbiBvY2N1cGFudCBpZA=="))
    }

    private static func measure<T>(_ body: () throws -> T) rethrows -> (T, Duration) {
        let start = ContinuousClock.now
        let result = try body()
        return (result, ContinuousClock.now - start)
    }

    private static func report(_ name: String, count: Int, bytes: Int, time: Duration) {
        let seconds = Double(time.components.seconds) + Double(time.components.attoseconds) / 1e18
        let perSecond = Int(Double(count) / seconds)
        let megabytes = Double(bytes) / 1_048_576 / seconds
        StandardStreams.writeOutput(
            "  \(name): \(perSecond) stanzas/s, \((megabytes * 10).rounded() / 10) MiB/s (\(count) in \(Int(seconds * 1000)) ms)\n")
    }

    private static func option(_ name: String, in arguments: [String]) -> Int? {
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
        return Int(arguments[index + 1])
    }
}

