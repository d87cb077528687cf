import Network
import TestSupport
import Testing
import XMLStream
import XMPP

/// The c2s test client used by the end-to-end tests fails loudly: what it cannot read ends its stanzas with the
/// parse error, instead of a silent end that would only show up as a timeout (or not at all).
@Suite struct XMPPTestClientTests {
    @Test func badXMLFailsTheNextWaitWithTheParseError() async throws {
        let failure = try await failureAfterLogin(sending: "<message type='groupchat'><body>unclosed</message>")
        #expect(failure.error is XMLStreamError)
        #expect(failure.element == nil)
        #expect("\(failure)".contains("\(failure.error)"))
        #expect("\(failure)".contains("XML stream error"))
    }

    @Test func anElementThatIsNotAStanzaFailsTheNextWaitWithTheStanzaError() async throws {
        let failure = try await failureAfterLogin(sending: "<nonsense xmlns='jabber:client'/>")
        #expect(failure.error is StanzaParseError)
        #expect(failure.element?.name == "nonsense")
        #expect("\(failure)".contains("\(failure.error)"))
    }

    @Test func stanzasQueuedBeforeTheErrorAreStillDelivered() async throws {
        let server = try FakeC2SServer()
        async let session = server.acceptLogin()
        let client = try await XMPPTestClient.connect(port: server.port, user: "romeo", domain: "localhost", password: "pw")
        try await session.write("<message type='chat' from='juliet@localhost/a'><body>first</body></message><oops xmlns='jabber:client'/>")
        let first = try await client.nextMessage()
        #expect(first.body == "first")
        await #expect(throws: XMPPTestClient.ReceiveFailed.self) { try await client.nextMessage(within: 5) }
        client.close()
        server.close()
    }

    /// Logs a client in to a fake server that then sends `xml`, and returns how the client's next wait fails.
    private func failureAfterLogin(sending xml: String) async throws -> XMPPTestClient.ReceiveFailed {
        let server = try FakeC2SServer()
        defer { server.close() }
        async let session = server.acceptLogin()
        let client = try await XMPPTestClient.connect(port: server.port, user: "romeo", domain: "localhost", password: "pw")
        defer { client.close() }
        try await session.write(xml)
        do {
            let stanza = try await client.nextStanza(within: 5)
            Issue.record("expected a failure, got \(stanza)")
            throw ExpectedFailure()
        } catch let failure as XMPPTestClient.ReceiveFailed {
            return failure
        }
    }

    private struct ExpectedFailure: Error {}
}

/// Just enough of a c2s server to log an ``XMPPTestClient`` in (RFC 6120: SASL PLAIN, stream restart, resource
/// binding) and then send whatever a test wants.
private final class FakeC2SServer: Sendable {
    let listener: TCPListener
    var port: Int { listener.port }

    init() throws { listener = try TCPListener() }

    func close() { listener.close() }

    /// Accepts one connection and runs the login script; returns the connection for the test to write on.
    func acceptLogin() async throws -> Session {
        var connections = listener.connections.makeAsyncIterator()
        guard let connection = try await connections.next() else { throw ListenerClosed() }
        var reader = StreamReader(connection)
        let header = "<?xml version='1.0'?><stream:stream xmlns='jabber:client' "
            + "xmlns:stream='http://etherx.jabber.org/streams' id='s1' from='localhost' version='1.0'>"
        _ = try await reader.next()
        try connection.write(Array((header + "<stream:features><mechanisms xmlns='\(XMPPNamespace.sasl)'>"
            + "<mechanism>PLAIN</mechanism></mechanisms></stream:features>").utf8))
        _ = try await reader.nextElement()
        // The client restarts the stream once it has read <success/>: the parser must be fresh before that.
        reader.reset()
        try connection.write(Array("<success xmlns='\(XMPPNamespace.sasl)'/>".utf8))
        _ = try await reader.next()
        try connection.write(Array((header + "<stream:features><bind xmlns='\(XMPPNamespace.bind)'/></stream:features>").utf8))
        let bind = try await reader.nextElement()
        try connection.write(Array(("<iq type='result' id='\(bind[attribute: "id"] ?? "")'><bind xmlns='\(XMPPNamespace.bind)'>"
            + "<jid>romeo@localhost/test</jid></bind></iq>").utf8))
        return Session(connection: connection)
    }

    struct ListenerClosed: Error {}

    /// The accepted connection, after login.
    struct Session: Sendable {
        let connection: TCPConnection
        func write(_ xml: String) throws { try connection.write(Array(xml.utf8)) }
    }
}
