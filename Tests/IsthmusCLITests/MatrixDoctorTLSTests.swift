import Foundation
import IsthmusCLI
import IsthmusConfig
import TestSupport
import Testing

/// `isthmus doctor` against an `https://` homeserver whose certificate the system does not trust (a Python `ssl`
/// server with a throwaway self-signed certificate): the finding names the certificate, not an outage.
@Suite struct MatrixDoctorTLSTests {
    @Test func anUntrustedCertificateIsNamedAsSuch() async throws {
        let directory = try TemporaryDirectory()
        _ = try TestCertificate(names: "DNS:localhost", in: directory)
        let server = try ScriptedPythonServer(script: PythonServerScripts.tlsServer, arguments: ["http1"], in: directory)
        let text = ConfigFixture.minimal.replacingOccurrences(of: "http://127.0.0.1:8008", with: "https://localhost:\(server.port)")
        let config = try Config.parse(text, baseDirectory: directory.path, environment: [:])
        let findings = await MatrixDoctor.check(config: config, logger: .disabled, timeout: .seconds(10))
        #expect(findings.map(\.ok) == [false])
        #expect(findings.first?.detail.contains("certificate of localhost not accepted: self-signed certificate") == true,
                "\(findings)")
    }
}
