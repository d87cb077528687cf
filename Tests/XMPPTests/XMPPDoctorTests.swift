import IsthmusCommon
import Network
import TestSupport
import Testing
import XMPPComponent

/// `isthmus doctor`'s XMPP half against a fake server: what it says when things work and when they do not.
@Suite struct XMPPDoctorTests {
    @Test func wrongSecretIsReportedPlainly() async throws {
        let server = try FakeXMPPServer()
        async let findings = XMPPDoctor.check(configuration: ComponentFixture.configuration(port: server.port), logger: .disabled)
        let session = try await server.nextSession()
        _ = try await session.receiveHeader()
        try session.sendComponentHeader()
        _ = try await session.receiveElement()
        try session.send("<stream:error><not-authorized xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error></stream:stream>")
        let result = await findings
        #expect(result.map(\.ok) == [true, false])
        #expect(result.last?.check == XMPPDoctor.Check.handshake)
        #expect(result.last?.detail.hasPrefix("the XMPP server rejected the component secret for bridge.localhost (not-authorized)") == true)
        server.close()
    }

    @Test func nothingListeningIsReportedPlainly() async throws {
        let reserved = try ReservedPort()
        let port = reserved.port
        let findings = await XMPPDoctor.check(configuration: ComponentFixture.configuration(port: port), logger: .disabled)
        #expect(findings == [DoctorFinding(
            ok: false, check: XMPPDoctor.Check.reachable, detail: "nothing is listening on 127.0.0.1:\(port) (connection refused)")])
    }

    @Test func workingLinkIsReportedOK() async throws {
        let server = try FakeXMPPServer()
        // The ping is answered at once; a long timeout only matters on a starved machine (a CI run's start stalled
        // every test for 16 s).
        let configuration = ComponentFixture.configuration(port: server.port, requestTimeout: .seconds(60))
        async let findings = XMPPDoctor.check(configuration: configuration, logger: .disabled)
        let session = try await server.nextSession()
        try await session.acceptComponent(secret: ComponentFixture.secret)
        let ping = try IQ(element: try await session.receiveElement())
        try session.send(ping.result().element)
        #expect(try await session.receive() == .streamEnd)
        // Our closing tag is a courtesy: the doctor waits 2 s for it, then closes, so on a starved machine the socket
        // may be gone already (seen in a clean-clone CI run: "connection closed" from this write).
        try? session.send("</stream:stream>")
        let result = await findings
        #expect(result.map(\.ok) == [true, true, true])
        #expect(result.map(\.check) == [XMPPDoctor.Check.reachable, XMPPDoctor.Check.handshake, XMPPDoctor.Check.ping])
        server.close()
    }
}
