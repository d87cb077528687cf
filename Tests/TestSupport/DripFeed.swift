import XMLStream

/// Feeds the same bytes to fresh ``XMLStreamParser``s in every way a socket could deliver them — all at once, split
/// at every single point, one byte at a time, and in chunks of a few sizes — and checks each delivery gives the same
/// events (and, for hostile input, the same refusal). The idea of SwiftNIO's `ByteToMessageDecoderVerifier`.
///
/// Pure; no I/O. Used by the parser tests and the XMPP model tests.
public enum DripFeed {
    /// What one delivery produced.
    public struct Outcome: Equatable, CustomStringConvertible {
        public var events: [XMLStreamEvent]
        public var error: XMLStreamError.Kind?
        public init(events: [XMLStreamEvent], error: XMLStreamError.Kind? = nil) {
            self.events = events
            self.error = error
        }
        public var description: String { "\(events.count) events, error: \(error.map { "\($0)" } ?? "none")" }
    }

    /// One way of cutting the input into chunks, with a name for failure messages.
    public struct Delivery: Sendable {
        public var name: String
        public var chunks: @Sendable ([UInt8]) -> [[UInt8]]
    }

    /// Everything at once, one byte at a time, and chunks of 2, 3, 7 and 64 bytes.
    public static let standardDeliveries: [Delivery] = [
        Delivery(name: "all at once") { [$0] },
        Delivery(name: "one byte at a time") { $0.map { [$0] } },
    ] + [2, 3, 7, 64].map { size in
        Delivery(name: "chunks of \(size)") { bytes in
            stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min(bytes.count, $0 + size)]) }
        }
    }

    /// Feeds `chunks` to a new parser; stops at the first refusal.
    public static func run(_ chunks: [[UInt8]], limits: XMLStreamLimits = .default) -> Outcome {
        let parser = XMLStreamParser(limits: limits)
        var events: [XMLStreamEvent] = []
        for chunk in chunks {
            do {
                try parser.feed(chunk, into: &events)
            } catch {
                return Outcome(events: events, error: error.kind)
            }
        }
        return Outcome(events: events, error: nil)
    }

    /// Runs every standard delivery and every two-chunk split of `input`; returns a message for each delivery whose
    /// outcome differs from `expected` (empty when all agree).
    public static func mismatches(
        _ input: String, expected: Outcome, limits: XMLStreamLimits = .default, everySplit: Bool = true
    ) -> [String] {
        let bytes = Array(input.utf8)
        return mismatches(bytes, expected: expected, limits: limits, everySplit: everySplit)
    }

    /// The byte-level form of ``mismatches(_:expected:limits:everySplit:)-(String,_,_,_)``.
    public static func mismatches(
        _ bytes: [UInt8], expected: Outcome, limits: XMLStreamLimits = .default, everySplit: Bool = true
    ) -> [String] {
        var problems: [String] = []
        for delivery in standardDeliveries {
            let outcome = run(delivery.chunks(bytes), limits: limits)
            if outcome != expected { problems.append("\(delivery.name): got \(outcome), expected \(expected)") }
        }
        if everySplit {
            for split in 0...bytes.count {
                let outcome = run([Array(bytes[..<split]), Array(bytes[split...])], limits: limits)
                if outcome != expected { problems.append("split at \(split): got \(outcome), expected \(expected)") }
            }
        }
        return problems
    }
}
