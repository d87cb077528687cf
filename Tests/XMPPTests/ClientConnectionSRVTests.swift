import Foundation
import IsthmusCommon
import Network
import TestSupport
import Testing
import XMPPClient

/// The client connection finding its server through SRV records served by a fake nameserver on loopback: the
/// candidates tried in order (a refused one skipped), direct-TLS ones with TLS from the first byte, `tls: direct`
/// asking for `_xmpps-client` only, and a fresh lookup on every attempt. The servers are the Python c2s endpoints of
/// ``ClientConnectionTLSTests``, for the account's domain `localhost`.
@Suite struct ClientConnectionSRVTests {
    static let directName = "_xmpps-client._tcp.localhost", startName = "_xmpp-client._tcp.localhost"

    func server(_ mode: String, in directory: TemporaryDirectory) throws -> ScriptedPythonServer {
        try ScriptedPythonServer(script: PythonServerScripts.xmppClientServer, arguments: [mode, "relay", "secret"], in: directory)
    }

    /// A directory holding a certificate for `localhost` (each Python server gets a directory of its own for its events).
    func certified() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        _ = try TestCertificate(names: "DNS:localhost", in: directory)
        return directory
    }

    func connection(dns: FakeDNSServer, fallbackPort: Int, direct: Bool = false, trusting file: String) -> ClientConnection {
        let stream = ClientStateMachine.Configuration(domain: "localhost", username: "relay", credential: .password("secret"),
                                                      resource: "srv", handshakeTimeout: .seconds(10))
        return ClientConnection(configuration: ClientConfiguration(
            host: "127.0.0.1", port: fallbackPort, stream: stream, directTLS: direct,
            srvLookup: SRVLookup(resolver: dns.resolver, timeout: .seconds(5)), trustedCertificatesFile: file,
            connectTimeout: .seconds(5), reconnectInitialDelay: .milliseconds(50), reconnectMaximumDelay: .milliseconds(200),
            tickInterval: .milliseconds(50)), logger: .disabled)
    }

    func target(_ port: Int, priority: UInt16) -> SRVRecord {
        SRVRecord(priority: priority, weight: 0, port: UInt16(port), target: "127.0.0.1")
    }

    /// Runs `connection` while `body` watches its events, then closes it.
    func running(_ connection: ClientConnection, _ body: (AsyncQueue<ClientEvent>) async throws -> Void) async throws {
        let events = AsyncQueue.collecting(connection.events)
        let runner = BackgroundTask { await connection.run() }
        do {
            try await body(events)
        } catch {
            await runner.stop()
            throw error
        }
        await connection.close()
        await runner.stop()
    }

    static let connected = ClientEvent.connected(JID("relay@localhost/tls")!, resumed: false)

    /// The first event that is not SCRAM's salted password.
    func firstEvent(_ events: AsyncQueue<ClientEvent>) async throws -> ClientEvent {
        while true {
            let event = try await events.next(within: 10, "a client event")
            if case .authenticated = event { continue }
            return event
        }
    }

    @Test func theCandidatesAreTriedInOrderARefusedOneSkipped() async throws {
        let closed = try ReservedPort()
        let first = try server("starttls", in: try certified()), second = try server("starttls", in: try certified())
        let dns = try FakeDNSServer([Self.startName: .records([target(second.port, priority: 20), target(closed.port, priority: 0),
                                                               target(first.port, priority: 10)])])
        let connection = connection(dns: dns, fallbackPort: second.port, trusting: first.directory.path("cert.pem"))
        // Both certificates are for localhost but differ; only the first server's is trusted, so a login proves where it went.
        try await running(connection) { events in
            let event = try await firstEvent(events)
            #expect(event == Self.connected)
        }
        let route = try #require(await connection.route)
        #expect(route.candidates.source == .srv)
        #expect(route.failures.map(\.endpoint.port) == [closed.port])
        #expect(route.failures.first?.error == .connectionRefused(host: "127.0.0.1", port: closed.port))
        #expect(route.connected == ServerEndpoint(host: "127.0.0.1", port: first.port, directTLS: false))
        #expect(first.events("tls") == ["tls 1 TLSv1.3 xmpp-client"], "STARTTLS on a _xmpp-client endpoint")
        #expect(second.events().isEmpty, "the later candidate is not tried")
        #expect(Set(dns.asked) == [Self.directName, Self.startName])
    }

    @Test func aDirectTLSCandidateSpeaksTLSFromTheFirstByte() async throws {
        let closed = try ReservedPort()
        let directory = try certified()
        let direct = try server("direct", in: directory)
        let startTLS = try server("starttls", in: try certified())
        let dns = try FakeDNSServer([
            Self.directName: .records([target(direct.port, priority: 5), target(closed.port, priority: 1)]),
            Self.startName: .records([target(startTLS.port, priority: 10)]),
        ])
        let connection = connection(dns: dns, fallbackPort: startTLS.port, trusting: directory.path("cert.pem"))
        try await running(connection) { events in
            let event = try await firstEvent(events)
            #expect(event == Self.connected)
        }
        let route = try #require(await connection.route)
        #expect(route.connected == ServerEndpoint(host: "127.0.0.1", port: direct.port, directTLS: true))
        #expect(route.failures.map(\.endpoint) == [ServerEndpoint(host: "127.0.0.1", port: closed.port, directTLS: true)])
        #expect(direct.events("tls") == ["tls 1 TLSv1.3 xmpp-client"], "TLS at once, ALPN xmpp-client, SNI and name localhost")
        #expect(direct.events("sasl") == ["sasl 1 ok"])
        #expect(startTLS.events().isEmpty)
    }

    @Test func directTLSOnlyAsksForXMPPSAndFallsBackToTheDomainsOwnPort() async throws {
        let directory = try certified()
        let direct = try server("direct", in: directory)
        let startTLS = try server("starttls", in: try certified())
        let dns = try FakeDNSServer([Self.startName: .records([target(startTLS.port, priority: 0)])])
        let connection = connection(dns: dns, fallbackPort: direct.port, direct: true, trusting: directory.path("cert.pem"))
        try await running(connection) { events in
            let event = try await firstEvent(events)
            #expect(event == Self.connected)
        }
        let route = try #require(await connection.route)
        #expect(route.candidates == ServerCandidates(source: .fallback(failures: []),
                                                     endpoints: [ServerEndpoint(host: "127.0.0.1", port: direct.port, directTLS: true)]))
        #expect(dns.asked == [Self.directName], "no _xmpp-client lookup with tls: direct")
        #expect(direct.events("tls") == ["tls 1 TLSv1.3 xmpp-client"])
        #expect(startTLS.events().isEmpty)
    }

    @Test func noServiceIsAClearErrorAndEachAttemptLooksUpAnew() async throws {
        let directory = try certified()
        let startTLS = try server("starttls", in: directory)
        let dot = FakeDNSServer.Answer.records([SRVRecord(priority: 0, weight: 0, port: 0, target: ".")])
        let dns = try FakeDNSServer([Self.directName: dot, Self.startName: dot])
        let connection = connection(dns: dns, fallbackPort: startTLS.port, trusting: directory.path("cert.pem"))
        try await running(connection) { events in
            let event = try await firstEvent(events)
            guard case .disconnected(.unreachable(let reason)) = event else {
                Issue.record("expected unreachable, got \(event)")
                return
            }
            #expect(reason == "the SRV records of localhost say it offers no XMPP client service (target '.')")
            #expect(startTLS.events().isEmpty, "no fallback to the domain itself after a '.'")
            // The records change; a later attempt (after the backoff) looks them up again and connects. Attempts that
            // started before the change still find no service.
            dns.answer(Self.startName, with: .records([target(startTLS.port, priority: 0)]))
            var next = try await firstEvent(events)
            while case .disconnected(.unreachable) = next { next = try await firstEvent(events) }
            #expect(next == Self.connected)
        }
        #expect(dns.asked.filter { $0 == Self.startName }.count >= 2)
    }
}
