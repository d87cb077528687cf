import Foundation
import IsthmusCommon
import Matrix
@testable import MatrixClient
import Network
import TestSupport
import Testing

/// `https://` homeservers: the client's own HTTP/1.1 over OpenSSL against Python's `ssl` server (an independent TLS
/// implementation), with a throwaway certificate from the `openssl` tool.
@Suite(.serialized) struct HTTPSClientTests {
    /// A TLS HTTP server on loopback answering every request with JSON naming the connection it came on.
    final class TLSServer {
        let process = Process()
        let port: Int
        let directory: URL
        let certificate: String

        static let script = #"""
        import http.server, ssl, sys, threading, itertools
        counter = itertools.count(1)
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def setup(self):
                super().setup()
                self.connection_id = next(counter)
            def answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length: self.rfile.read(length)
                body = ('{"joined_rooms":["!c%d:localhost"]}' % self.connection_id).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            do_GET = do_PUT = do_POST = answer
            def log_message(self, *args): pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

        /// `names`: the certificate's subject alternative names (`DNS:localhost,IP:127.0.0.1`).
        init(names: String) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("isthmus-tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            certificate = directory.appendingPathComponent("cert.pem").path
            let key = directory.appendingPathComponent("key.pem").path
            let openssl = Process()
            openssl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            openssl.arguments = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
                                 "-days", "2", "-subj", "/CN=isthmus-test", "-addext", "subjectAltName=\(names)"]
            openssl.standardOutput = FileHandle.nullDevice
            openssl.standardError = FileHandle.nullDevice
            try openssl.run()
            let deadline = Date().addingTimeInterval(30)
            while openssl.isRunning && Date() < deadline { usleep(10_000) }
            guard openssl.terminationStatus == 0 else { throw TestFailure("openssl req failed") }
            let output = Pipe()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-c", Self.script, certificate, key]
            process.standardOutput = output
            try process.run()
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let more = output.fileHandleForReading.availableData
                guard !more.isEmpty else { throw TestFailure("the TLS server did not start") }
                line += more
            }
            guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw TestFailure("the TLS server printed no port")
            }
            self.port = port
        }

        deinit {
            // Not waitUntilExit(): on Linux it waits on a run loop that an async test's thread does not run.
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            try? FileManager.default.removeItem(at: directory)
        }
    }

    struct TestFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static let once = RetryPolicy(maxAttempts: 1, initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(1))

    func client(_ url: String, trusting file: String?) -> MatrixClient {
        MatrixClient(configuration: .init(homeserverURL: URL(string: url)!, accessToken: "as-token", requestTimeout: .seconds(10),
                                          retryPolicy: Self.once, trustedCertificatesFile: file), logger: .disabled)
    }

    @Test func requestsGoOverTLSOnKeptAliveConnections() async throws {
        let server = try TLSServer(names: "DNS:localhost,IP:127.0.0.1")
        for host in ["localhost", "127.0.0.1"] {
            let client = client("https://\(host):\(server.port)", trusting: server.certificate)
            var connections: Set<RoomID> = []
            for _ in 0..<20 { connections.formUnion(try await client.joinedRooms()) }
            #expect(connections.count == 1, "20 requests one after another share one connection (\(host))")
        }
        // Several at once, each answered whole.
        let http = HTTP1Client(host: "localhost", port: server.port, maxConnections: 4, tls: try TLSContext(caFile: server.certificate))
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    try await http.send(method: "PUT", target: "/x", headers: [], body: Data(repeating: 65, count: 100_000),
                                        timeout: .seconds(10)).status
                }
            }
            for try await status in group { #expect(status == 200) }
        }
    }

    @Test func anUntrustedCertificateIsRefusedPlainly() async throws {
        let server = try TLSServer(names: "DNS:localhost")
        do {
            _ = try await client("https://localhost:\(server.port)", trusting: nil).joinedRooms()
            Issue.record("a self-signed certificate was accepted")
        } catch {
            #expect(error.kind == .unusable)
            #expect(error.message.contains("certificate of localhost not accepted: self-signed certificate"), "\(error.message)")
        }
    }

    @Test func aCertificateForAnotherNameIsRefused() async throws {
        let server = try TLSServer(names: "DNS:matrix.example.org")
        do {
            _ = try await client("https://localhost:\(server.port)", trusting: server.certificate).joinedRooms()
            Issue.record("a certificate for another host was accepted")
        } catch {
            #expect(error.message.contains("certificate of localhost not accepted: no alternative certificate subject name matches"),
                    "\(error.message)")
        }
    }
}
