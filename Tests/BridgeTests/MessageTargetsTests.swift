@testable import Bridge
import IsthmusCommon
import IsthmusStore
import Testing
import XMPP

/// What an XMPP message refers to, read from the message map: ids the sender chose only among the sender's own
/// messages (the lookups of rooms and DMs alike).
@Suite struct MessageTargetsTests {
    let dm = RoomID("!dm:localhost")!
    let muc = JID("lounge@conference.localhost")!
    let romeo = JID("romeo@localhost")!
    let juliet = JID("juliet@localhost")!

    func message(from realJID: JID, _ references: MessageReferences) -> RoomMessage {
        var message = RoomMessage(room: muc, nick: realJID.localpart ?? "", id: StanzaAttributeID("new"), realJID: realJID, body: "x")
        message.references = references
        return message
    }

    @Test func aSenderRefersToTheirOwnMessageByItsIDButNotToSomeoneElses() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        let romeos = MessageMapping(room: dm, eventID: EventID("$romeo")!, stanzaID: nil, originID: nil, direction: .xmppToMatrix,
                                    sender: .occupant(.realJID(romeo)), state: .delivered, xmppID: StanzaAttributeID("pm1"))
        #expect(try await store.insertMapping(romeos))
        let reactions = MessageReferences(reactions: .init(id: "pm1", keys: ["👍"]))
        let reply = MessageReferences(reply: .init(to: nil, id: "pm1"))
        let retraction = MessageReferences(retractions: [.current(id: "pm1")])
        // Romeo reacting to, replying to or retracting his own message (a private message has no stanza-id).
        let own = try await store.xmppTargets(of: message(from: romeo, reactions), in: dm)
        #expect(own.reacted?.eventID == romeos.eventID)
        #expect(try await store.xmppTargets(of: message(from: romeo, reply), in: dm).reply?.eventID == romeos.eventID)
        #expect(try await store.xmppTargets(of: message(from: romeo, retraction), in: dm).retracted?.eventID == romeos.eventID)
        // Juliet naming the same id finds nothing: ids the sender chose are unique per sender only.
        #expect(try await store.xmppTargets(of: message(from: juliet, reactions), in: dm).reacted == nil)
        #expect(try await store.xmppTargets(of: message(from: juliet, reply), in: dm).reply == nil)
        #expect(try await store.xmppTargets(of: message(from: juliet, retraction), in: dm).retracted == nil)
        await store.close()
    }
}
