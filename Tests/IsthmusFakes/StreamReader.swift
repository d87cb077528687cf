import Network
import XMLStream

/// Reads parsed stream events from a connection one at a time (for scripted handshakes in tests). Not `Sendable`:
/// used by one task; ``reset()`` starts a new stream on the same connection (after SASL success).
public struct StreamReader {
    private var inbound: TCPInbound.AsyncIterator
    private let parser = XMLStreamParser()
    private var buffered: [XMLStreamEvent] = []

    /// The peer sent something other than what the reader expects next.
    public struct UnexpectedEvent: Error, CustomStringConvertible {
        public var expected: String
        public var got: XMLStreamEvent
        public var description: String { "expected \(expected), got \(got)" }

        public init(expected: String, got: XMLStreamEvent) {
            self.expected = expected
            self.got = got
        }
    }

    /// Why reading stopped.
    public struct Ended: Error, CustomStringConvertible {
        public var description: String { "the connection ended" }
    }

    public init(_ connection: TCPConnection) {
        inbound = connection.inbound.makeAsyncIterator()
    }

    /// The next event; throws ``Ended`` at end of stream and ``XMLStreamError`` on bad XML.
    public mutating func next() async throws -> XMLStreamEvent {
        while buffered.isEmpty {
            guard let chunk = try await inbound.next() else { throw Ended() }
            try parser.feed(chunk, into: &buffered)
        }
        return buffered.removeFirst()
    }

    /// The next top-level element (skipping nothing: anything else is an error).
    public mutating func nextElement() async throws -> XElement {
        let event = try await next()
        guard case .element(let element) = event else { throw UnexpectedEvent(expected: "an element", got: event) }
        return element
    }

    /// Starts parsing a new stream (the peer's next bytes are a new header).
    public mutating func reset() {
        precondition(buffered.isEmpty, "stream restart with unread events")
        parser.reset()
    }
}
