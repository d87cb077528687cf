import Foundation
import IsthmusCommon
import Network
import TestSupport
import Testing
import XMPPClient

/// `isthmus doctor` in client mode against a Python c2s endpoint over TLS: what works is said, and the first thing
/// that does not (the certificate, the password) is named plainly.
@Suite struct ClientDoctorTests {
    func server(names: String = "DNS:localhost", mode: String = "starttls") throws -> ScriptedPythonServer {
        let directory = try TemporaryDirectory()
        _ = try TestCertificate(names: names, in: directory)
        return try ScriptedPythonServer(script: PythonServerScripts.xmppClientServer, arguments: [mode, "relay", "secret"], in: directory)
    }

    func configuration(_ server: ScriptedPythonServer, password: String = "secret", trusting file: String?,
                       directTLS: Bool = false) -> ClientConfiguration {
        let stream = ClientStateMachine.Configuration(domain: "localhost", username: "relay", credential: .password(password),
                                                      resource: "doctor", handshakeTimeout: .seconds(10), fastTokens: false)
        return ClientConfiguration(host: "127.0.0.1", port: server.port, stream: stream, directTLS: directTLS, trustedCertificatesFile: file,
                                   connectTimeout: .seconds(5), tickInterval: .milliseconds(50))
    }

    func summary(_ findings: [DoctorFinding]) -> [String] {
        findings.map { "\($0.ok ? ($0.warning ? "warn" : "ok") : "FAIL") \($0.check)" }
    }

    @Test func aWorkingAccountIsReportedStepByStep() async throws {
        let server = try server()
        let findings = await ClientDoctor.check(configuration: configuration(server, trusting: server.directory.path("cert.pem")),
                                                logger: .disabled)
        #expect(summary(findings) == ["ok XMPP server reachable", "ok XMPP TLS", "ok XMPP login", "warn XMPP stream management",
                                      "ok XMPP server answers pings"])
        #expect(findings[1].detail.contains("TLSv1.3"), "\(findings[1].detail)")
        #expect(findings[2].detail.contains("logged in as relay@localhost/"), "\(findings[2].detail)")
        #expect(findings[2].detail.contains("SCRAM-SHA-1-PLUS"), "\(findings[2].detail)")
        #expect(findings[3].detail.contains("archives"), "what a missing XEP-0198 costs is said")
    }

    /// What SASL2 did is said with the login; doctor asks for no FAST token (it would keep none).
    @Test func aSASL2LoginSaysWhatItDidInline() async throws {
        let server = try server(mode: "sasl2")
        let findings = await ClientDoctor.check(configuration: configuration(server, trusting: server.directory.path("cert.pem"), directTLS: true),
                                                logger: .disabled)
        #expect(summary(findings) == ["ok XMPP server reachable", "ok XMPP TLS", "ok XMPP login", "ok XMPP stream management",
                                      "ok XMPP server answers pings"])
        #expect(findings[2].detail == "logged in as relay@localhost/Isthmus~1 with SCRAM-SHA-1-PLUS over SASL2 with Bind2, XEP-0198 inline, FAST offered")
        #expect(server.events("token").isEmpty)
    }

    @Test func anUntrustedCertificateFailsTheTLSCheckAndNoCredentialGoes() async throws {
        let server = try server()
        let findings = await ClientDoctor.check(configuration: configuration(server, trusting: nil), logger: .disabled)
        #expect(summary(findings) == ["ok XMPP server reachable", "FAIL XMPP TLS"])
        #expect(findings.last?.detail.contains("ca_file") == true, "the fix is named: \(findings.last?.detail ?? "")")
        #expect(server.events("auth").isEmpty)
    }

    @Test func aWrongPasswordFailsTheLogin() async throws {
        let server = try server()
        let findings = await ClientDoctor.check(configuration: configuration(server, password: "wrong", trusting: server.directory.path("cert.pem")),
                                                logger: .disabled)
        #expect(summary(findings) == ["ok XMPP server reachable", "FAIL XMPP login"])
        #expect(findings.last?.detail.contains("relay@localhost") == true, "\(findings.last?.detail ?? "")")
    }

    /// The configuration with the server looked up in `dns` (the SRV records of `localhost`).
    func looking(up dns: FakeDNSServer, _ configuration: ClientConfiguration) -> ClientConfiguration {
        var configuration = configuration
        configuration.srvLookup = SRVLookup(resolver: dns.resolver, timeout: .seconds(5))
        return configuration
    }

    @Test func theSRVRecordsFoundAndTheEndpointThatAnsweredAreSaid() async throws {
        let server = try server()
        let closed = try ReservedPort()
        let dns = try FakeDNSServer(["_xmpp-client._tcp.localhost": .records([
            SRVRecord(priority: 0, weight: 0, port: UInt16(closed.port), target: "127.0.0.1"),
            SRVRecord(priority: 1, weight: 0, port: UInt16(server.port), target: "127.0.0.1")])])
        var configuration = configuration(server, trusting: server.directory.path("cert.pem"))
        configuration.port = 1   // the fallback, not used: the records name the server
        let findings = await ClientDoctor.check(configuration: looking(up: dns, configuration), logger: .disabled)
        #expect(summary(findings) == ["ok XMPP server lookup", "ok XMPP server reachable", "ok XMPP TLS", "ok XMPP login",
                                      "warn XMPP stream management", "ok XMPP server answers pings"])
        #expect(findings[0].detail == "the SRV records of localhost name 127.0.0.1:\(closed.port), 127.0.0.1:\(server.port)")
        #expect(findings[1].detail == "127.0.0.1:\(server.port) accepts connections (before it: 127.0.0.1:\(closed.port): connection refused)")
    }

    @Test func noSRVRecordsIsTheDomainItself() async throws {
        let server = try server()
        let dns = try FakeDNSServer([:])
        let findings = await ClientDoctor.check(configuration: looking(up: dns, configuration(server, trusting: server.directory.path("cert.pem"))),
                                                logger: .disabled)
        #expect(summary(findings).prefix(3) == ["ok XMPP server lookup", "ok XMPP server reachable", "ok XMPP TLS"])
        #expect(findings[0].detail == "localhost has no SRV records for XMPP clients: the domain itself, 127.0.0.1:\(server.port)")
    }

    @Test func aFailedLookupIsAWarningAndTheDomainItselfIsTried() async throws {
        let server = try server()
        let dns = try FakeDNSServer(["_xmpp-client._tcp.localhost": .serverFailure, "_xmpps-client._tcp.localhost": .serverFailure])
        let findings = await ClientDoctor.check(configuration: looking(up: dns, configuration(server, trusting: server.directory.path("cert.pem"))),
                                                logger: .disabled)
        #expect(summary(findings).prefix(3) == ["warn XMPP server lookup", "ok XMPP server reachable", "ok XMPP TLS"])
        #expect(findings[0].detail.hasPrefix("the SRV lookup failed (the lookup of _xmpps-client._tcp.localhost failed: "), "\(findings[0].detail)")
    }

    @Test func aDomainThatOffersNoServiceFailsTheLookup() async throws {
        let server = try server()
        let dot = FakeDNSServer.Answer.records([SRVRecord(priority: 0, weight: 0, port: 0, target: ".")])
        let dns = try FakeDNSServer(["_xmpp-client._tcp.localhost": dot, "_xmpps-client._tcp.localhost": dot])
        let findings = await ClientDoctor.check(configuration: looking(up: dns, configuration(server, trusting: nil)), logger: .disabled)
        #expect(summary(findings) == ["FAIL XMPP server lookup"])
        #expect(findings[0].detail.contains("server_host"), "the way out is named: \(findings[0].detail)")
        #expect(server.events().isEmpty)
    }

    @Test func nothingListeningFailsReachability() async throws {
        let server = try server()
        var configuration = configuration(server, trusting: nil)
        configuration.port = 1
        let findings = await ClientDoctor.check(configuration: configuration, logger: .disabled)
        #expect(summary(findings) == ["FAIL XMPP server reachable"])
    }
}
