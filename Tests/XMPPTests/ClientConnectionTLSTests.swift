import Foundation
import IsthmusCommon
import TestSupport
import Testing
import XMPPClient

/// The client connection's TLS against a Python c2s endpoint (Python's `ssl` and `hashlib`: independent of OpenSSL
/// glue and of our SCRAM): STARTTLS and direct TLS, ALPN, SCRAM-SHA-1-PLUS bound to the server's certificate, and
/// certificates that must be refused.
@Suite struct ClientConnectionTLSTests {
    func server(_ mode: String, names: String = "DNS:localhost") throws -> ScriptedPythonServer {
        let directory = try TemporaryDirectory()
        _ = try TestCertificate(names: names, in: directory)
        return try ScriptedPythonServer(script: PythonServerScripts.xmppClientServer, arguments: [mode, "relay", "secret"], in: directory)
    }

    func connection(to server: ScriptedPythonServer, direct: Bool, trusting file: String?) -> ClientConnection {
        let stream = ClientStateMachine.Configuration(domain: "localhost", username: "relay", credential: .password("secret"),
                                                      resource: "tls", handshakeTimeout: .seconds(10))
        return ClientConnection(configuration: ClientConfiguration(
            host: "127.0.0.1", port: server.port, stream: stream, directTLS: direct, trustedCertificatesFile: file,
            connectTimeout: .seconds(5), reconnectInitialDelay: .milliseconds(50), reconnectMaximumDelay: .milliseconds(200),
            tickInterval: .milliseconds(50)), logger: .disabled)
    }

    /// The first event that is not SCRAM's salted password.
    func firstEvent(_ events: AsyncQueue<ClientEvent>) async throws -> ClientEvent {
        while true {
            let event = try await events.next(within: 10, "a client event")
            if case .authenticated = event { continue }
            return event
        }
    }

    @Test(arguments: ["starttls", "direct"])
    func logsInOverTLSWithTheBindingToTheServersCertificate(mode: String) async throws {
        let server = try server(mode)
        let connection = connection(to: server, direct: mode == "direct", trusting: server.directory.path("cert.pem"))
        let events = AsyncQueue.collecting(connection.events)
        let runner = BackgroundTask { await connection.run() }
        defer { Task { await runner.stop() } }
        #expect(try await firstEvent(events) == .connected(JID("relay@localhost/tls")!, resumed: false))
        try await connection.send(.iq(IQ(type: .get, to: JID("localhost"), id: StanzaAttributeID("p1")!, payload: .ping)))
        guard case .stanza(.iq(let pong), _) = try await firstEvent(events) else { Issue.record("no pong"); return }
        #expect(pong.id == StanzaAttributeID("p1") && pong.type == .result)
        #expect(server.events("tls") == ["tls 1 TLSv1.3 xmpp-client"])
        #expect(server.events("auth") == ["auth 1 SCRAM-SHA-1-PLUS"], "bound SCRAM, since the server announces tls-server-end-point")
        #expect(server.events("binding") == ["binding 1 ok"], "the c= the server recomputed from its own certificate")
        #expect(server.events("sasl") == ["sasl 1 ok"])
        await connection.close()
        await runner.stop()
    }

    @Test func anUntrustedOrMisnamedCertificateEndsTheLinkBeforeAnyCredential() async throws {
        for (names, trust) in [("DNS:localhost", false), ("DNS:example.org", true)] {
            let server = try server("starttls", names: names)
            let connection = connection(to: server, direct: false, trusting: trust ? server.directory.path("cert.pem") : nil)
            let events = AsyncQueue.collecting(connection.events)
            let runner = BackgroundTask { await connection.run() }
            let event = try await firstEvent(events)
            guard case .disconnected(.tlsFailed(let reason)) = event else {
                Issue.record("expected a TLS failure, got \(event)")
                await runner.stop()
                continue
            }
            #expect(reason.contains("not accepted"), "\(reason)")
            #expect(server.events("auth").isEmpty, "no credential went to a server we do not trust")
            await runner.stop()
        }
    }
}
