import Bridge
import IsthmusCommon
import TestSupport
import Testing
import XMPPComponent

/// ``ComponentXMPPLink`` over a real component connection to a fake XMPP server (loopback).
@Suite struct ComponentXMPPLinkTests {
    /// A room sends every stanza to each occupant the component hosts; with a primary occupant, only its copies (and
    /// message errors, which report our own messages' failures) reach the bridge.
    @Test func dropsCopiesForOtherOccupantsButKeepsErrors() async throws {
        let server = try FakeXMPPServer()
        defer { server.close() }
        let connection = ComponentConnection(
            configuration: ComponentConfiguration(host: "127.0.0.1", port: server.port, componentDomain: "bridge.localhost",
                                                  secret: "s3cret", serverDomain: "localhost", pingInterval: .seconds(3600)),
            logger: .disabled)
        let bot = try #require(JID("bridge.localhost/isthmus"))
        let link = ComponentXMPPLink(connection: connection, logger: .disabled, primaryOccupant: bot)
        let runner = BackgroundTask { await connection.run() }
        let events = AsyncQueue.collecting(link.events)
        let session = try await server.nextSession()
        _ = try await session.acceptComponent(secret: "s3cret")
        _ = try await events.next(within: 5, "connected")

        let puppet = "alice\\3alocalhost@bridge.localhost/isthmus"
        for to in [puppet, "bridge.localhost/isthmus"] {
            try session.send("<presence from='room@muc.localhost/bob' to='\(to)'><x xmlns='http://jabber.org/protocol/muc#user'/></presence>")
            try session.send("<message type='groupchat' from='room@muc.localhost/bob' to='\(to)' id='m1'><body>hi</body></message>")
        }
        try session.send("<message type='error' from='room@muc.localhost' to='\(puppet)' id='m2'>"
            + "<error type='cancel'><not-acceptable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></message>")
        try session.send("<message type='groupchat' from='room@muc.localhost/bob' to='bridge.localhost/isthmus' id='m3'><body>end</body></message>")

        var seen: [String] = []
        while seen.last != "message m3" {
            switch try await events.next(within: 5, "a room event") {
            case .presence(let presence): seen.append("presence to \(presence.to?.description ?? "-")")
            case .message(let message): seen.append("message \(message.id ?? "-")\(message.error != nil ? " error" : "")")
            default: break
            }
        }
        #expect(seen == ["presence to bridge.localhost/isthmus", "message m1", "message m2 error", "message m3"])
        await runner.stop()
    }
}
