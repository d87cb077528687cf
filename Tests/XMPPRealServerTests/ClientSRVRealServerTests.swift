import Foundation
import IsthmusCommon
import Network
import TestSupport
import XCTest
import XMPPClient

/// The account's connection finding the bed's real XMPP server through SRV records (served by a fake nameserver on
/// loopback, since the bed's domain has none in real DNS): a refused endpoint first, then the server, logged in.
final class ClientSRVRealServerTests: XCTestCase {
    func testTheServerNamedBySRVRecordsIsReachedPastARefusedOne() async throws {
        let bed = try TestBed.fromEnvironment()
        let closed = try ReservedPort()
        let dns = try FakeDNSServer(["_xmpp-client._tcp.\(bed.xmppDomain)": .records([
            SRVRecord(priority: 0, weight: 0, port: UInt16(closed.port), target: bed.host),
            SRVRecord(priority: 10, weight: 0, port: UInt16(bed.c2sPort), target: bed.host)])])
        defer { dns.close() }
        let resource = "srv-\(UUID().uuidString.prefix(8))"
        let stream = ClientStateMachine.Configuration(domain: bed.xmppDomain, username: "carol", credential: .password(bed.password),
                                                      resource: resource, allowPlaintext: true, handshakeTimeout: .seconds(10))
        // The fallback is a refused port too: only the records lead to the server.
        let connection = ClientConnection(
            configuration: ClientConfiguration(host: bed.host, port: closed.port, stream: stream,
                                               srvLookup: SRVLookup(resolver: dns.resolver, timeout: .seconds(5)),
                                               connectTimeout: .seconds(5), tickInterval: .milliseconds(50)),
            logger: RealComponent.logger)
        let events = AsyncQueue.collecting(connection.events)
        let runner = BackgroundTask { await connection.run() }
        var event = try await events.next(within: 10, "connected")
        while case .authenticated = event { event = try await events.next(within: 10, "connected") }
        XCTAssertEqual(event, .connected(JID("carol@\(bed.xmppDomain)/\(resource)")!, resumed: false))
        let route = await connection.route
        XCTAssertEqual(route?.candidates.source, .srv)
        XCTAssertEqual(route?.failures.map(\.endpoint.port), [closed.port])
        XCTAssertEqual(route?.connected, ServerEndpoint(host: bed.host, port: bed.c2sPort, directTLS: false))
        await connection.close()
        await runner.stop()
    }
}
