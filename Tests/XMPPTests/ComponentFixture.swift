import IsthmusCommon
import TestSupport
import XMPPComponent

/// A ``ComponentConnection`` running against a ``FakeXMPPServer``, with its events queued for the test.
struct ComponentFixture {
    static let secret = "s3cret"
    static let domain = "bridge.localhost"

    let server: FakeXMPPServer
    let connection: ComponentConnection
    let runner: BackgroundTask
    let events: AsyncQueue<ComponentEvent>

    /// Fast timers for tests; the keepalive is off unless asked for. The connect and handshake timeouts are long: the
    /// unit tier runs a thousand tests at once on two cores, and a fake server's session can be starved for seconds
    /// (a 5 s handshake timeout closed connections the test was about to answer). No loopback test times them out.
    static func configuration(
        port: Int, pingInterval: Duration = .seconds(3600), pingTimeout: Duration = .seconds(5),
        requestTimeout: Duration = .seconds(5), primaryOccupant: JID? = nil
    ) -> ComponentConfiguration {
        var configuration = ComponentConfiguration(
            host: "127.0.0.1", port: port, componentDomain: domain, secret: secret, serverDomain: "localhost",
            pingInterval: pingInterval, pingTimeout: pingTimeout, connectTimeout: .seconds(30),
            handshakeTimeout: .seconds(30), requestTimeout: requestTimeout,
            reconnectInitialDelay: .milliseconds(20), reconnectMaximumDelay: .milliseconds(100),
            tickInterval: .milliseconds(20))
        configuration.primaryOccupant = primaryOccupant
        return configuration
    }

    /// Starts the connection against a new fake server (nothing accepted yet).
    init(
        pingInterval: Duration = .seconds(3600), pingTimeout: Duration = .seconds(5), requestTimeout: Duration = .seconds(5),
        primaryOccupant: JID? = nil
    ) throws {
        server = try FakeXMPPServer()
        let connection = ComponentConnection(
            configuration: Self.configuration(
                port: server.port, pingInterval: pingInterval, pingTimeout: pingTimeout, requestTimeout: requestTimeout,
                primaryOccupant: primaryOccupant),
            logger: .disabled)
        self.connection = connection
        events = AsyncQueue.collecting(connection.events)
        runner = BackgroundTask { await connection.run() }
    }

    /// Accepts the next connection's handshake and waits for `.connected`.
    func acceptNext(reconnected: Bool = false) async throws -> FakeXMPPSession {
        let session = try await server.nextSession()
        try await session.acceptComponent(secret: Self.secret)
        let event = try await nextEvent()
        guard event == .connected(reconnected: reconnected) else { throw TestFailure("expected connected(\(reconnected)), got \(event)") }
        return session
    }

    /// The next event (any kind).
    func nextEvent(within seconds: Double = 5) async throws -> ComponentEvent {
        try await events.next(within: seconds, "a component event")
    }

    /// The next delivered stanza (skipping connection events).
    func nextStanza(within seconds: Double = 5) async throws -> Stanza {
        let event = try await events.next(within: seconds, "a stanza") { if case .stanza = $0 { true } else { false } }
        guard case .stanza(let stanza) = event else { fatalError("unreachable") }
        return stanza
    }

    func stop() async {
        await runner.stop()
        server.close()
    }
}
