import Bridge
import IsthmusCommon
import TestSupport
import Testing
import XMPPComponent

/// ``SessionXMPPLink`` over a real component connection to a fake XMPP server (loopback).
@Suite struct SessionXMPPLinkTests {
    /// A room sends every stanza to each occupant the component hosts; with a primary occupant, only its copies (and
    /// message errors, which report our own messages' failures) reach the bridge.
    @Test func dropsCopiesForOtherOccupantsButKeepsErrors() async throws {
        let server = try FakeXMPPServer()
        defer { server.close() }
        let connection = ComponentConnection(
            configuration: ComponentConfiguration(host: "127.0.0.1", port: server.port, componentDomain: "bridge.localhost",
                                                  secret: "s3cret", serverDomain: "localhost", pingInterval: .seconds(3600)),
            logger: .disabled)
        let bot = try #require(JID("isthmus@bridge.localhost/isthmus"))
        let link = SessionXMPPLink(connection: connection, logger: .disabled, primaryOccupant: bot)
        let runner = BackgroundTask { await connection.run() }
        let events = AsyncQueue.collecting(link.events.map(\.event))
        let session = try await server.nextSession()
        _ = try await session.acceptComponent(secret: "s3cret")
        _ = try await events.next(within: 5, "connected")

        let puppet = "alice\\3alocalhost@bridge.localhost/isthmus"
        for to in [puppet, "isthmus@bridge.localhost/isthmus"] {
            try session.send("<presence from='room@muc.localhost/bob' to='\(to)'><x xmlns='http://jabber.org/protocol/muc#user'/></presence>")
            try session.send("<message type='groupchat' from='room@muc.localhost/bob' to='\(to)' id='m1'><body>hi</body></message>")
        }
        try session.send("<message type='error' from='room@muc.localhost' to='\(puppet)' id='m2'>"
            + "<error type='cancel'><not-acceptable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></message>")
        try session.send("<message type='groupchat' from='room@muc.localhost/bob' to='isthmus@bridge.localhost/isthmus' id='m3'><body>end</body></message>")

        var seen: [String] = []
        while seen.last != "message m3" {
            switch try await events.next(within: 5, "a room event") {
            case .presence(let presence): seen.append("presence to \(presence.to?.description ?? "-")")
            case .message(let message): seen.append("message \(message.id?.rawValue ?? "-")\(message.error != nil ? " error" : "")")
            default: break
            }
        }
        #expect(seen == ["presence to isthmus@bridge.localhost/isthmus", "message m1", "message m2 error", "message m3"])
        await runner.stop()
    }

    /// MUC private messages reach the bridge as such — to the bridge's occupant (the consent handshake reads them)
    /// with the occupant-id the room added, and to puppets (each is the only copy: it goes to that user's DM) — and so
    /// does an error the room bounced for one of our private messages (named by its id).
    @Test func privateMessagesToTheBridgesOccupantArePrivateMessages() async throws {
        let server = try FakeXMPPServer()
        defer { server.close() }
        let connection = ComponentConnection(
            configuration: ComponentConfiguration(host: "127.0.0.1", port: server.port, componentDomain: "bridge.localhost",
                                                  secret: "s3cret", serverDomain: "localhost", pingInterval: .seconds(3600)),
            logger: .disabled)
        let bot = try #require(JID("isthmus@bridge.localhost/isthmus"))
        let link = SessionXMPPLink(connection: connection, logger: .disabled, primaryOccupant: bot)
        let runner = BackgroundTask { await connection.run() }
        let events = AsyncQueue.collecting(link.events.map(\.event))
        let session = try await server.nextSession()
        _ = try await session.acceptComponent(secret: "s3cret")
        _ = try await events.next(within: 5, "connected")

        let puppet = "alice\\3alocalhost@bridge.localhost/isthmus"
        try session.send("<message type='chat' from='room@muc.localhost/Juliet' to='\(puppet)' id='p1'><body>to a puppet</body></message>")
        try session.send("<message type='chat' from='room@muc.localhost/Juliet' to='isthmus@bridge.localhost/isthmus' id='p2'><body>yes</body>"
            + "<occupant-id xmlns='urn:xmpp:occupant-id:0' id='oid-juliet'/><x xmlns='http://jabber.org/protocol/muc#user'/></message>")
        try session.send("<message type='error' from='room@muc.localhost/Gone' to='\(puppet)' id='isthmus-pm-1'><error type='cancel'>"
            + "<item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></message>")
        // A body-less reaction set and a correction keep what they refer to; a moderation is the room's, not a PM's; a
        // body-less chat state is not a message at all.
        try session.send("<message type='chat' from='room@muc.localhost/Juliet' to='\(puppet)' id='p3'>"
            + "<reactions xmlns='urn:xmpp:reactions:0' id='isthmus-pm-9'><reaction>👍</reaction></reactions></message>")
        try session.send("<message type='chat' from='room@muc.localhost/Juliet' to='\(puppet)' id='p4'><body>fixed</body>"
            + "<replace xmlns='urn:xmpp:message-correct:0' id='p1'/><origin-id xmlns='urn:xmpp:sid:0' id='o4'/>"
            + "<retract xmlns='urn:xmpp:message-retract:1' id='s1'><moderated xmlns='urn:xmpp:message-moderate:1' by='room@muc.localhost/Juliet'/></retract></message>")
        try session.send("<message type='chat' from='room@muc.localhost/Juliet' to='\(puppet)' id='p5'>"
            + "<composing xmlns='http://jabber.org/protocol/chatstates'/></message>")
        try session.send("<message type='groupchat' from='room@muc.localhost/bob' to='isthmus@bridge.localhost/isthmus' id='m3'><body>end</body></message>")

        var privates: [RoomMessage] = []
        while true {
            let event = try await events.next(within: 5, "a room event")
            if case .privateMessage(let message) = event { privates.append(message) }
            if case .message(let message) = event, message.id == StanzaAttributeID("m3") { break }
            if case .message(let message) = event { Issue.record("a private message became a groupchat one: \(message)") }
        }
        #expect(privates.map(\.id?.rawValue) == ["p1", "p2", "isthmus-pm-1", "p3", "p4"])
        #expect(privates[3].body == nil)
        #expect(privates[3].references.reactions == MessageReferences.Reactions(id: "isthmus-pm-9", keys: ["👍"]))
        #expect(privates[4].references.replaces == "p1")
        #expect(privates[4].originID == OriginID("o4"))
        #expect(privates[4].references.moderation == nil)
        #expect(privates.first?.to == JID(puppet))
        #expect(privates.first?.body == "to a puppet")
        #expect(privates[1].room == JID("room@muc.localhost"))
        #expect(privates[1].nick == "Juliet")
        #expect(privates[1].body == "yes")
        #expect(privates[1].occupantID == OccupantID("oid-juliet"))
        #expect(privates[2].nick == "Gone")
        #expect(privates[2].originID == OriginID("isthmus-pm-1"))
        #expect(privates[2].error == StanzaErrorInfo(condition: .itemNotFound))
        await runner.stop()
    }
}
