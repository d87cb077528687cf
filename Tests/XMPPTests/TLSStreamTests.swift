import Foundation
import IsthmusCommon
import Network
import TestSupport
import Testing

/// The TLS client (`TLSStream`, OpenSSL over a `TCPConnection`) against Python's `ssl` server (an implementation
/// independent of ours) with a throwaway certificate from the `openssl` tool: STARTTLS after a plaintext prefix, direct
/// TLS, ALPN, the channel-binding data SCRAM -PLUS needs, and refused certificates.
@Suite struct TLSStreamTests {
    /// `maximum`: the server's highest TLS version (`1.2`, `1.3`, `any`); `mode`: `starttls` or `direct`.
    func server(maximum: String = "any", mode: String = "starttls") throws -> ScriptedPythonServer {
        let directory = try TemporaryDirectory()
        _ = try TestCertificate(names: "DNS:localhost,IP:127.0.0.1", in: directory)
        return try ScriptedPythonServer(script: PythonServerScripts.startTLSServer, arguments: [maximum, mode], in: directory)
    }

    func trusting(_ server: ScriptedPythonServer) throws -> TLSContext {
        try TLSContext(caFile: server.directory.path("cert.pem"))
    }

    /// Sends `starttls`, reads the plaintext answer up to `proceed` with the connection's iterator, then hands that
    /// iterator to the TLS handshake (as the XMPP reader will at `<proceed/>`).
    func startTLS(_ server: ScriptedPythonServer, host: String = "localhost", context: TLSContext) async throws
        -> (tcp: TCPConnection, tls: TLSStream) {
        let tcp = try await TCPConnection.connect(host: "127.0.0.1", port: server.port)
        try tcp.write(Array("starttls\n".utf8))
        var inbound = tcp.inbound.makeAsyncIterator()
        var plain: [UInt8] = []
        while !plain.contains(UInt8(ascii: "\n")), let chunk = try await inbound.next() { plain += chunk }
        #expect(String(decoding: plain, as: UTF8.self) == "proceed\n")
        let tls = try await TLSStream.connect(over: tcp, inbound: inbound, host: host, context: context, alpn: ["xmpp-client"])
        return (tcp, tls)
    }

    func readLine(_ tls: TLSStream) async throws -> String {
        var bytes: [UInt8] = []
        while !bytes.contains(UInt8(ascii: "\n")), let chunk = try await tls.next() { bytes += chunk }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The DER of the PEM certificate the server presents.
    func certificateDER(_ server: ScriptedPythonServer) throws -> [UInt8] {
        let pem = try String(contentsOfFile: server.directory.path("cert.pem"), encoding: .utf8)
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return Array(try #require(Data(base64Encoded: body)))
    }

    @Test func startTLSContinuesThePlaintextIteratorAndEchoesThroughTLS() async throws {
        let server = try server()
        let (_, tls) = try await startTLS(server, context: try trusting(server))
        #expect(tls.negotiatedALPN == "xmpp-client")
        #expect(tls.protocolVersion == "TLSv1.3")
        try tls.write(Array("hello over tls\n".utf8))
        #expect(try await readLine(tls) == "HELLO OVER TLS\n")
        try tls.write(Array("second\n".utf8))
        #expect(try await readLine(tls) == "SECOND\n")
        #expect(server.events("plain") == ["plain 1 starttls"])
        #expect(server.events("tls") == ["tls 1 TLSv1.3 xmpp-client"])
        #expect(server.events("echo") == ["echo 1 hello over tls", "echo 1 second"])
        tls.abort()
    }

    @Test func directTLSToAnAddressWithoutALPN() async throws {
        let server = try server(mode: "direct")
        let tcp = try await TCPConnection.connect(host: "127.0.0.1", port: server.port)
        let tls = try await TLSStream.connect(over: tcp, host: "127.0.0.1", context: try trusting(server))
        #expect(tls.negotiatedALPN == nil)
        try tls.write(Array("direct\n".utf8))
        #expect(try await readLine(tls) == "DIRECT\n")
        #expect(server.events("tls") == ["tls 1 TLSv1.3 none"])
        tls.abort()
    }

    @Test func serverEndPointBindingIsSHA256OfTheCertificate() async throws {
        let server = try server()
        let (_, tls) = try await startTLS(server, context: try trusting(server))
        let expected = Digest.sha256(try certificateDER(server))
        #expect(expected.count == 32)
        #expect(tls.serverEndPointChannelBinding() == expected)
        tls.abort()
    }

    @Test func exporterBindingIs32BytesAndDiffersPerConnection() async throws {
        let server = try server()
        let context = try trusting(server)
        let (_, first) = try await startTLS(server, context: context)
        let (_, second) = try await startTLS(server, context: context)
        let one = try #require(first.exporterChannelBinding())
        let two = try #require(second.exporterChannelBinding())
        #expect(one.count == 32 && two.count == 32)
        #expect(one != two)
        #expect(first.exporterChannelBinding() == one, "stable for one connection")
        first.abort()
        second.abort()
    }

    @Test func tls12WithExtendedMasterSecretStillExports() async throws {
        let server = try server(maximum: "1.2")
        let (_, tls) = try await startTLS(server, context: try trusting(server))
        #expect(tls.protocolVersion == "TLSv1.2")
        // Python's ssl on OpenSSL 3 negotiates the extended master secret by default, so the binding is defined.
        #expect(tls.exporterChannelBinding()?.count == 32)
        #expect(tls.serverEndPointChannelBinding() == Digest.sha256(try certificateDER(server)))
        try tls.write(Array("twelve\n".utf8))
        #expect(try await readLine(tls) == "TWELVE\n")
        #expect(server.events("tls") == ["tls 1 TLSv1.2 xmpp-client"], "recorded before the echo")
        tls.abort()
    }

    @Test func anUntrustedCertificateIsRefused() async throws {
        let server = try server()
        let context = try TLSContext()   // the system's CA store: the self-signed certificate is not in it
        do {
            _ = try await startTLS(server, context: context)
            Issue.record("an untrusted certificate was accepted")
        } catch let NetworkError.tls(reason) {
            #expect(reason.contains("certificate of localhost not accepted: self-signed certificate"), "\(reason)")
            #expect(NetworkError.tls(reason).description.hasPrefix("TLS: "))
        }
    }

    @Test func aWrongHostNameIsRefused() async throws {
        let server = try server()
        let context = try trusting(server)
        let tcp = try await TCPConnection.connect(host: "127.0.0.1", port: server.port)
        try tcp.write(Array("starttls\n".utf8))
        var inbound = tcp.inbound.makeAsyncIterator()
        var plain: [UInt8] = []
        while !plain.contains(UInt8(ascii: "\n")), let chunk = try await inbound.next() { plain += chunk }
        do {
            _ = try await TLSStream.connect(over: tcp, inbound: inbound, host: "example.org", context: context)
            Issue.record("a certificate for localhost was accepted for example.org")
        } catch let NetworkError.tls(reason) {
            #expect(reason.contains("certificate of example.org not accepted: hostname mismatch"), "\(reason)")
        }
        #expect(throws: NetworkError.closed) { try tcp.write([1]) }
    }
}
