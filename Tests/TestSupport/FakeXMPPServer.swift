import Network
import Synchronization
import XMLStream

/// A scriptable XMPP server on a loopback port for tier-2 tests: each accepted connection becomes a
/// ``FakeXMPPSession`` the test drives step by step (expect an element, send XML). `Sendable`.
public final class FakeXMPPServer: Sendable {
    /// The port to connect to on 127.0.0.1.
    public let port: Int
    private let listener: TCPListener
    private let sessions: AsyncQueue<FakeXMPPSession>
    /// Sessions accepted but not yet handed to the test, and whether ``close()`` ran: a closed server aborts them,
    /// so a client that connected just before the close sees its connection drop at once instead of waiting out
    /// its handshake timeout on a socket nobody reads.
    private let unclaimed: Unclaimed

    public init() throws {
        listener = try TCPListener()
        port = listener.port
        let unclaimed = Unclaimed()
        self.unclaimed = unclaimed
        sessions = AsyncQueue.collecting(listener.connections.map { connection in
            let session = FakeXMPPSession(connection: connection)
            let closed = unclaimed.state.withLock { state in
                if !state.closed { state.sessions[ObjectIdentifier(session)] = session }
                return state.closed
            }
            if closed { connection.abort() }
            return session
        })
    }

    /// The next accepted connection.
    public func nextSession(within seconds: Double = 10) async throws -> FakeXMPPSession {
        let session = try await sessions.next(within: seconds, "a connection to the fake server")
        _ = unclaimed.state.withLock { $0.sessions.removeValue(forKey: ObjectIdentifier(session)) }
        return session
    }

    /// Stops accepting, and aborts the connections accepted but never taken with ``nextSession(within:)``
    /// (sessions already taken stay open).
    public func close() {
        listener.close()
        sessions.stop()
        let abandoned = unclaimed.state.withLock { state in
            state.closed = true
            defer { state.sessions = [:] }
            return Array(state.sessions.values)
        }
        for session in abandoned { session.connection.abort() }
    }

    private final class Unclaimed: Sendable {
        let state = Mutex<(closed: Bool, sessions: [ObjectIdentifier: FakeXMPPSession])>((false, [:]))
    }
}

/// One connection to the ``FakeXMPPServer``: what the client sent, parsed; and a way to answer. `Sendable`.
public final class FakeXMPPSession: Sendable {
    /// The connection's socket (to abort it, or write raw bytes).
    public let connection: TCPConnection
    private let events: AsyncQueue<Result<XMLStreamEvent, XMLStreamError>>

    init(connection: TCPConnection) {
        self.connection = connection
        events = AsyncQueue.collecting(FakeXMPPSession.parse(connection.inbound))
    }

    /// The client's bytes as parsed events; an XML error is an event (tests assert on it), a broken connection
    /// ends the stream with its error (readers get it rather than a plain end).
    private static func parse(_ inbound: TCPInbound) -> AsyncThrowingStream<Result<XMLStreamEvent, XMLStreamError>, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                let parser = XMLStreamParser()
                do {
                    for try await chunk in inbound {
                        var parsed: [XMLStreamEvent] = []
                        do throws(XMLStreamError) {
                            try parser.feed(chunk, into: &parsed)
                        } catch {
                            for event in parsed { continuation.yield(.success(event)) }
                            continuation.yield(.failure(error))
                            break
                        }
                        for event in parsed { continuation.yield(.success(event)) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The next stream event the client sent.
    public func receive(within seconds: Double = 10) async throws -> XMLStreamEvent {
        try await events.next(within: seconds, "an XML event from the client").get()
    }

    /// The client's stream header.
    public func receiveHeader(within seconds: Double = 10) async throws -> StreamHeader {
        let event = try await receive(within: seconds)
        guard case .streamStart(let header) = event else { throw UnexpectedEvent(expected: "a stream header", got: event) }
        return header
    }

    /// The next top-level element the client sent.
    public func receiveElement(within seconds: Double = 10) async throws -> XElement {
        let event = try await receive(within: seconds)
        guard case .element(let element) = event else { throw UnexpectedEvent(expected: "an element", got: event) }
        return element
    }

    /// Writes `xml` as is.
    public func send(_ xml: String) throws {
        try connection.write(Array(xml.utf8))
    }

    /// Writes `element` as a stanza of a component stream.
    public func send(_ element: XElement) throws {
        try connection.write(XMLSerializer.bytes(of: element))
    }

    /// Answers a component's stream header with ours (stream id `id`).
    public func sendComponentHeader(id: String = "fake-stream-id", from: String = "bridge.localhost") throws {
        try send("<?xml version='1.0'?><stream:stream xmlns='jabber:component:accept' "
            + "xmlns:stream='http://etherx.jabber.org/streams' id='\(id)' from='\(from)'>")
    }

    /// Expects the component's header and `<handshake>` for `secret`, and accepts it. Returns the handshake digest.
    @discardableResult
    public func acceptComponent(secret: String, id: String = "fake-stream-id") async throws -> String {
        _ = try await receiveHeader()
        try sendComponentHeader(id: id)
        let handshake = try await receiveElement()
        guard handshake.name == "handshake" else { throw UnexpectedEvent(expected: "<handshake>", got: .element(handshake)) }
        try send("<handshake/>")
        return handshake.text
    }

    /// Why a step of the script failed.
    public typealias UnexpectedEvent = StreamReader.UnexpectedEvent
}
