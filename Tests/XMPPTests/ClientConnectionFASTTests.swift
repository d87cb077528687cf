import Foundation
import IsthmusCommon
import TestSupport
import Testing
import XMPPClient

/// FAST (XEP-0484) through the client connection against the Python c2s endpoint in `sasl2` mode (Python's `ssl`,
/// `hashlib` and `hmac`: independent of our TLS glue, SCRAM and HT), since Prosody 0.12.3 cannot run mod_sasl2_fast:
/// the password login asks for a token, the next login is made with it (HT-SHA-256-ENDP, bound to the server's
/// certificate) and takes the rotated one, a token the server forgot is refused and the password logs in at once.
@Suite struct ClientConnectionFASTTests {
    /// Records what the connection keeps, as the store would.
    final class RecordingKeeper: ClientCredentialKeeper, @unchecked Sendable {
        private let lock = NSLock()
        private var values: [CredentialCache] = []
        func keep(_ credentials: CredentialCache) async throws { lock.withLock { values.append(credentials) } }
        var last: CredentialCache? { lock.withLock { values.last } }
    }

    let userAgent = SASL2UserAgent(id: "d4ac9e2d-2a6b-4f2e-9c58-1a0e3f5b7c11", device: "test")

    func connection(to server: ScriptedPythonServer, credentials: CredentialCache, keeper: RecordingKeeper) -> ClientConnection {
        let stream = ClientStateMachine.Configuration(domain: "localhost", username: "relay", credential: .password("secret"),
                                                      resource: "fast", handshakeTimeout: .seconds(10), userAgent: userAgent)
        return ClientConnection(configuration: ClientConfiguration(
            host: "127.0.0.1", port: server.port, stream: stream, directTLS: true, trustedCertificatesFile: server.directory.path("cert.pem"),
            connectTimeout: .seconds(5), reconnectInitialDelay: .seconds(30), tickInterval: .milliseconds(50)),
                                credentials: credentials, credentialKeeper: keeper, logger: .disabled)
    }

    /// Runs a connection until it is connected; returns what it negotiated and the events before, then closes it.
    func login(_ server: ScriptedPythonServer, credentials: CredentialCache, keeper: RecordingKeeper)
        async throws -> (negotiated: ClientConnection.Negotiated?, events: [ClientEvent], credentials: CredentialCache) {
        let connection = connection(to: server, credentials: credentials, keeper: keeper)
        let events = AsyncQueue.collecting(connection.events)
        let runner = BackgroundTask { await connection.run() }
        var seen: [ClientEvent] = []
        while true {
            let event = try await events.next(within: 10, "the login")
            seen.append(event)
            if case .connected = event { break }
        }
        let negotiated = await connection.negotiated
        await connection.close()
        await runner.stop()
        return (negotiated, seen, await connection.credentials)
    }

    @Test func aTokenIsAskedForUsedRotatedAndWhenRefusedThePasswordLogsInAtOnce() async throws {
        let directory = try TemporaryDirectory()
        _ = try TestCertificate(names: "DNS:localhost", in: directory)
        let server = try ScriptedPythonServer(script: PythonServerScripts.xmppClientServer, arguments: ["sasl2", "relay", "secret"], in: directory)
        let keeper = RecordingKeeper()

        let first = try await login(server, credentials: CredentialCache(), keeper: keeper)
        #expect(first.negotiated?.mechanism == SASLMechanismName("SCRAM-SHA-1-PLUS"))
        #expect(first.negotiated?.sasl2 == .init(bind2: true, inlineStreamManagement: true, fastLogin: false, fastOffered: true))
        #expect(server.events("token") == ["token 1 secret-token:fast-1 HT-SHA-256-ENDP"], "the strongest mechanism this channel binds")
        #expect(first.credentials.fastToken?.secret == "secret-token:fast-1" && first.credentials.saltedPassword != nil)
        #expect(server.events("from") == ["from 1 relay@localhost"], "XEP-0484: the account in the header, inside TLS")

        let second = try await login(server, credentials: try #require(keeper.last), keeper: keeper)
        #expect(second.negotiated?.mechanism == SASLMechanismName("HT-SHA-256-ENDP"))
        #expect(second.negotiated?.sasl2?.fastLogin == true)
        #expect(server.events("ht") == ["ht 2 HT-SHA-256-ENDP ok 1"], "the server's own HMAC over its certificate's hash matched")
        #expect(server.events("auth").count == 1, "no password exchange on the second login")
        #expect(second.credentials.fastToken?.secret == "secret-token:fast-2", "the rotated token is kept")
        #expect(keeper.last?.fastToken?.secret == "secret-token:fast-2")
        #expect(Set(server.events("agent")) == ["agent 1 \(userAgent.id)", "agent 2 \(userAgent.id)"])

        try Data().write(to: URL(fileURLWithPath: directory.path("revoked")))
        let third = try await login(server, credentials: try #require(keeper.last), keeper: keeper)
        #expect(third.events.contains(.disconnected(.keptCredentialRefused(.fastToken, .credentialsExpired, text: nil))))
        #expect(third.negotiated?.mechanism == SASLMechanismName("SCRAM-SHA-1-PLUS"), "the password, in the same run, without backoff")
        #expect(server.events("ht").last == "ht 3 HT-SHA-256-ENDP refused 1", "a new token's count starts again")
        #expect(server.events("auth").last == "auth 4 SCRAM-SHA-1-PLUS")
        #expect(third.credentials.fastToken?.secret == "secret-token:fast-3", "a new token asked for with the password")
    }
}
