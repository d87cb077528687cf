import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import TestSupport
import XCTest

/// Checks the real-server test bed itself (scripts/testbed): Synapse loaded the bridge's registration, Prosody
/// accepts component streams, and the restart hooks the bridge tests rely on work. Needs `scripts/test`.
final class TestBedTests: XCTestCase {
    func testEnvironmentWithoutTestBedExplainsHowToRunTheTests() {
        XCTAssertThrowsError(try TestBed.fromEnvironment([:])) { error in
            XCTAssertEqual(
                "\(error)",
                "ISTHMUS_TEST_CONFIG is not set: run the real-server tests through scripts/test "
                    + "(or source DIR/env after scripts/testbed start)"
            )
        }
    }

    func testSynapseAcceptsTheBridgeRegistration() async throws {
        let bed = try TestBed.fromEnvironment()
        try await waitUntilSynapseIsHealthy(bed)

        var request = URLRequest(url: bed.synapseURL.appendingPathComponent("_matrix/client/v3/account/whoami"))
        request.setValue("Bearer \(bed.asToken)", forHTTPHeaderField: "Authorization")
        request.timeoutInterval = 10
        let (data, response) = try await URLSession.shared.data(for: request)
        XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200, String(decoding: data, as: UTF8.self))
        let whoami = try JSONDecoder().decode(WhoAmI.self, from: data)
        XCTAssertEqual(whoami.userID, "@isthmus:localhost")

        let log = try String(contentsOf: bed.synapseLog, encoding: .utf8)
        XCTAssertTrue(log.contains("Loaded application service"), "Synapse did not log loading the registration")
        let errorLines = log.split(separator: "\n").filter { line in
            let lower = line.lowercased()
            let isError = line.contains(" - ERROR - ") || line.contains(" - CRITICAL - ")
            return isError && ["appservice", "application service", "registration"].contains { lower.contains($0) }
        }
        XCTAssertEqual(errorLines, [], "registration or appservice errors in \(bed.synapseLog.path)")
    }

    func testProsodyAnswersOnTheComponentPort() throws {
        let bed = try TestBed.fromEnvironment()
        try assertComponentStreamHeader(bed)
    }

    /// Prosody's second host offers SASL2 with Bind2 — and its features arrive at all (mod_sasl2_fast, which would stop
    /// them on Prosody 0.12.3, is not loaded), beside legacy SASL on the same stream. ejabberd 23.01 offers legacy SASL
    /// alone on its one host.
    func testTheSASL2HostOffersSASL2WithBind2() throws {
        let bed = try TestBed.fromEnvironment()
        let domain = try bed.sasl2DomainIfOffered()
        let socket = try LoopbackSocket(port: bed.c2sPort, timeout: 5)
        try socket.send("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' "
                        + "to='\(domain ?? bed.xmppDomain)' version='1.0'>")
        let reply = try socket.receive(until: Date().addingTimeInterval(5)) { $0.contains("</stream:features>") }
        guard domain != nil else {
            XCTAssertFalse(reply.contains("urn:xmpp:sasl:2"), reply)
            XCTAssertTrue(reply.contains("<mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'"), reply)
            return
        }
        XCTAssertTrue(reply.contains("<authentication xmlns='urn:xmpp:sasl:2'>"), reply)
        XCTAssertTrue(reply.contains("<bind xmlns='urn:xmpp:bind:0'>"), reply)
        XCTAssertTrue(reply.contains("<mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>"), reply)
        XCTAssertFalse(reply.contains("urn:xmpp:fast:0"), "FAST does not work on 0.12.3: \(reply)")
    }

    func testProsodyRestartKillAndStartOne() throws {
        let bed = try TestBed.fromEnvironment()
        try bed.restart(.xmpp)
        try assertComponentStreamHeader(bed)

        try bed.kill(.xmpp)
        let whileKilled = Result { try LoopbackSocket(port: bed.componentPort, timeout: 2) }
        try bed.startOne(.xmpp)  // before any assertion, so later tests find Prosody running
        if case .success = whileKilled { XCTFail("the component port still accepted connections after kill") }
        try assertComponentStreamHeader(bed)
    }

    func testSynapseRestart() async throws {
        let bed = try TestBed.fromEnvironment()
        try bed.restart(.synapse)
        try await waitUntilSynapseIsHealthy(bed)
    }

    func testPostgresRestartKillAndStartOne() throws {
        let bed = try TestBed.fromEnvironment()
        let url = try XCTUnwrap(bed.postgresURL, "scripts/test starts the bed with --postgres")
        let port = try XCTUnwrap(URLComponents(string: url)?.port)
        // Creating (and dropping) a database proves the server answers.
        _ = try PostgresTestDatabase()
        try bed.restart(.postgres)
        _ = try PostgresTestDatabase()

        try bed.kill(.postgres)
        let whileKilled = Result { try LoopbackSocket(port: port, timeout: 2) }
        try bed.startOne(.postgres)  // before any assertion, so later tests find PostgreSQL running
        if case .success = whileKilled { XCTFail("the PostgreSQL port still accepted connections after kill") }
        _ = try PostgresTestDatabase()
    }

    // MARK: Helpers

    private struct WhoAmI: Decodable {
        let userID: String
        enum CodingKeys: String, CodingKey { case userID = "user_id" }
    }

    /// Polls `GET /health` until it answers `OK` or the deadline passes.
    private func waitUntilSynapseIsHealthy(_ bed: TestBed, within seconds: TimeInterval = 15) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        var lastAnswer = "no answer"
        while Date() < deadline {
            var request = URLRequest(url: bed.synapseURL.appendingPathComponent("health"))
            request.timeoutInterval = 2
            do {
                let (data, _) = try await URLSession.shared.data(for: request)
                lastAnswer = String(decoding: data, as: UTF8.self)
                if lastAnswer == "OK" { return }
            } catch {
                lastAnswer = "\(error)"
            }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        XCTFail("Synapse at \(bed.synapseURL) not healthy within \(seconds) s; last answer: \(lastAnswer)")
    }

    /// Opens a XEP-0114 stream on the component port and expects Prosody's stream header with an id.
    private func assertComponentStreamHeader(
        _ bed: TestBed, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let socket = try LoopbackSocket(port: bed.componentPort, timeout: 5)
        try socket.send(
            "<stream:stream xmlns='jabber:component:accept' xmlns:stream='http://etherx.jabber.org/streams'"
                + " to='\(bed.componentDomain)'>"
        )
        let reply = try socket.receive(until: Date().addingTimeInterval(5)) { text in
            guard let start = text.range(of: "<stream:stream") else { return false }
            return text[start.upperBound...].contains(">")
        }
        XCTAssertTrue(reply.contains("<stream:stream"), "no stream header in reply: \(reply)", file: file, line: line)
        XCTAssertTrue(reply.contains(" id="), "stream header without id: \(reply)", file: file, line: line)
    }
}

/// A blocking TCP connection to 127.0.0.1, just enough to poke a server in a test. Owns its descriptor.
private final class LoopbackSocket {
    struct Failure: Error, CustomStringConvertible {
        let operation: String
        let port: Int
        let code: Int32
        var description: String { "\(operation) on 127.0.0.1:\(port) failed: \(String(cString: strerror(code)))" }
    }

    private let descriptor: Int32
    private let port: Int

    /// Connects; `timeout` bounds every later send and receive call.
    init(port: Int, timeout: Int) throws {
        self.port = port
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(operation: "socket", port: port, code: errno) }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))

        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                connect(descriptor, generic, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(descriptor)
            throw Failure(operation: "connect", port: port, code: code)
        }
    }

    deinit { close(descriptor) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(operation: "send", port: port, code: errno)
            }
            sent += count
        }
    }

    /// Reads until `isComplete` accepts what has arrived, the peer closes, or the deadline passes.
    func receive(until deadline: Date, isComplete: (String) -> Bool) throws -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer[..<count]
                let text = String(decoding: received, as: UTF8.self)
                if isComplete(text) { return text }
            } else if count == 0 {
                break
            } else if errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK {
                throw Failure(operation: "recv", port: port, code: errno)
            }
        }
        return String(decoding: received, as: UTF8.self)
    }
}
