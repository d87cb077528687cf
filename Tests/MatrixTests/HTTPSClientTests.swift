import Foundation
import IsthmusCommon
import Matrix
@testable import MatrixClient
import TestSupport
import Testing

/// `https://` homeservers: the client (libcurl) against Python's `ssl` server and the `h2` library (implementations
/// independent of libcurl), with a throwaway certificate from the `openssl` tool. The servers count connections, so
/// reuse is proven rather than assumed. Serialized: two tests set process-wide environment variables.
@Suite(.serialized) struct HTTPSClientTests {
    /// `offering`: `h2` (ALPN offers HTTP/2 and HTTP/1.1) or `http1`.
    func tlsServer(names: String, offering: String = "http1") throws -> ScriptedPythonServer {
        let directory = try TemporaryDirectory()
        _ = try TestCertificate(names: names, in: directory)
        return try ScriptedPythonServer(script: PythonServerScripts.tlsServer, arguments: [offering], in: directory)
    }

    static let once = RetryPolicy(maxAttempts: 1, initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(1))
    /// Would try a transport failure five times: shows that a certificate failure is not retried.
    static let patient = RetryPolicy(maxAttempts: 5, initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(1))

    func client(_ url: String, trusting file: String?, policy: RetryPolicy = once) -> MatrixClient {
        MatrixClient(configuration: .init(homeserverURL: URL(string: url)!, accessToken: "as-token", requestTimeout: .seconds(10),
                                          retryPolicy: policy, trustedCertificatesFile: file), logger: .disabled)
    }

    /// The connection and stream numbers the test server put in a `joined_rooms` answer (`!c3s5:localhost`).
    static func origin(_ room: RoomID) -> (connection: Int, stream: Int) {
        let digits = room.rawValue.dropFirst(2).prefix { $0 != ":" }.split(separator: "s")
        return (Int(digits[0]) ?? -1, Int(digits[1]) ?? -1)
    }

    @Test func requestsGoOverTLSOnKeptAliveConnections() async throws {
        let server = try tlsServer(names: "DNS:localhost,IP:127.0.0.1")
        let certificate = server.directory.path("cert.pem")
        for host in ["localhost", "127.0.0.1"] {
            let client = client("https://\(host):\(server.port)", trusting: certificate)
            var connections: Set<Int> = []
            for _ in 0..<20 { connections.formUnion(try await client.joinedRooms().map { Self.origin($0).connection }) }
            #expect(connections.count == 1, "20 requests one after another share one connection (\(host))")
        }
        #expect(server.events("accept").count == 2, "one connection per client: \(server.events())")
        #expect(server.events("tls").allSatisfy { $0.hasSuffix("http/1.1") }, "\(server.events("tls"))")
        // Several at once, each answered whole, on at most maxConnections connections.
        let transport = CurlTransport(maxConnections: 4, caFile: certificate)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    let response = try await transport.send(HTTPRequest(method: "PUT", url: "https://localhost:\(server.port)/x", headers: [],
                                                                         body: Data(repeating: 65, count: 100_000), timeout: .seconds(10)))
                    return response.status
                }
            }
            for try await status in group { #expect(status == 200) }
        }
        #expect(server.events("accept").count <= 2 + 4)
        #expect(server.events("request").count == 40 + 40)
    }

    @Test func http2WhenOfferedCarriesEveryCallOnOneConnection() async throws {
        let server = try tlsServer(names: "DNS:localhost", offering: "h2")
        let client = client("https://localhost:\(server.port)", trusting: server.directory.path("cert.pem"))
        let origins = try await withThrowingTaskGroup(of: [RoomID].self) { group in
            for _ in 0..<16 { group.addTask { try await client.joinedRooms() } }
            return try await group.reduce(into: []) { $0 += $1 }.map(Self.origin)
        }
        #expect(Set(origins.map(\.connection)) == [1], "16 calls at once on one connection: \(origins)")
        #expect(Set(origins.map(\.stream)).count == 16, "each on its own HTTP/2 stream: \(origins)")
        #expect(server.events("tls") == ["tls 1 h2"])

        let transport = CurlTransport(maxConnections: 4, caFile: server.directory.path("cert.pem"))
        let response = try await transport.send(HTTPRequest(method: "GET", url: "https://localhost:\(server.port)/v", headers: [],
                                                            timeout: .seconds(10)))
        #expect(response.httpVersion == "2" && response.status == 200)
    }

    @Test func anUntrustedCertificateIsRefusedPlainlyAndNotRetried() async throws {
        let server = try tlsServer(names: "DNS:localhost")
        do throws(MatrixError) {
            _ = try await client("https://localhost:\(server.port)", trusting: nil, policy: Self.patient).joinedRooms()
            Issue.record("a self-signed certificate was accepted")
        } catch {
            #expect(error.kind == .unusable)
            #expect(error.message == "certificate of localhost not accepted: self-signed certificate", "\(error.message)")
            #expect(error.attempts == 1)
        }
        #expect(server.events("accept").count == 1, "no second attempt: \(server.events())")
    }

    @Test func aCertificateForAnotherNameIsRefusedPlainlyAndNotRetried() async throws {
        let server = try tlsServer(names: "DNS:matrix.example.org")
        do throws(MatrixError) {
            _ = try await client("https://localhost:\(server.port)", trusting: server.directory.path("cert.pem"), policy: Self.patient)
                .joinedRooms()
            Issue.record("a certificate for another host was accepted")
        } catch {
            #expect(error.kind == .unusable)
            #expect(error.message.hasPrefix("certificate of localhost not accepted: no alternative certificate subject name matches"),
                    "\(error.message)")
            #expect(error.attempts == 1)
        }
        #expect(server.events("accept").count == 1, "no second attempt: \(server.events())")
    }

    @Test func sslCertFileIsTrustedWhenNoFileIsConfigured() async throws {
        let server = try tlsServer(names: "DNS:localhost")
        let rooms = try await withEnvironment(["SSL_CERT_FILE": server.directory.path("cert.pem")]) {
            try await client("https://localhost:\(server.port)", trusting: nil).joinedRooms()
        }
        #expect(rooms.count == 1)
    }

    @Test func theProxyEnvironmentIsHonoured() async throws {
        let server = try tlsServer(names: "DNS:localhost")
        let proxy = try ScriptedPythonServer(script: PythonServerScripts.connectProxy)
        let certificate = server.directory.path("cert.pem")
        let proxied = ["HTTPS_PROXY": "http://127.0.0.1:\(proxy.port)", "https_proxy": nil, "ALL_PROXY": nil, "all_proxy": nil,
                       "NO_PROXY": nil, "no_proxy": nil]
        try await withEnvironment(proxied) {
            let client = client("https://localhost:\(server.port)", trusting: certificate)
            for _ in 0..<3 { _ = try await client.joinedRooms() }
        }
        #expect(proxy.events("CONNECT") == ["CONNECT localhost:\(server.port)"], "one tunnel, kept alive: \(proxy.events())")
        #expect(server.events("request").count == 3)

        var bypassed = proxied
        bypassed["NO_PROXY"] = "localhost"
        try await withEnvironment(bypassed) {
            _ = try await client("https://localhost:\(server.port)", trusting: certificate).joinedRooms()
        }
        #expect(proxy.events("CONNECT").count == 1, "NO_PROXY=localhost goes direct: \(proxy.events())")
        #expect(server.events("request").count == 4)
    }

    /// Runs `body` with the environment variables set (nil: unset), then restores them.
    func withEnvironment<T>(_ variables: [String: String?], _ body: () async throws -> T) async rethrows -> T {
        let saved = variables.keys.map { ($0, ProcessInfo.processInfo.environment[$0]) }
        func apply(_ name: String, _ value: String?) {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        for (name, value) in variables { apply(name, value) }
        defer { for (name, value) in saved { apply(name, value) } }
        return try await body()
    }
}
