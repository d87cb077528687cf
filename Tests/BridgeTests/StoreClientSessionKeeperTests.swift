@testable import Bridge
import IsthmusCommon
import IsthmusStore
import TestSupport
import Testing
import XMPP
import XMPPClient

/// Client mode's session in the store: what the connection keeps comes back as it was, stanzas included.
@Suite struct StoreClientSessionKeeperTests {
    @Test func aKeptSessionComesBackWithItsUnacknowledgedStanzas() async throws {
        let fixture = try await StoreBackend.sqlite.open(persistent: true)
        let keeper = StoreClientSessionKeeper(store: fixture.store, account: JID("relay@localhost")!)
        #expect(try await keeper.load() == nil)
        let message = Message(type: .groupchat, to: JID("room@muc.localhost")!, id: StanzaAttributeID("o1"), body: "<Ann> a & b\n'ü'",
                              originID: OriginID("o1"))
        let presence = Presence(to: JID("room@muc.localhost/Matrix")!, mucJoin: MUCJoinRequest(history: MUCHistoryRequest.none))
        let sm = StreamManagement<Stanza>(sessionID: "sm-1", location: nil, inboundHandled: 41, outboundAcknowledged: 9,
                                          unacknowledged: [.message(message), .presence(presence)])
        let resumption = ClientStateMachine.Resumption(streamManagement: sm, jid: JID("relay@localhost/isthmus")!)
        try await keeper.keep(resumption)
        let loaded = try #require(try await StoreClientSessionKeeper(store: fixture.reopen(), account: JID("relay@localhost")!).load())
        #expect(loaded.jid == resumption.jid)
        #expect(loaded.streamManagement.sessionID == "sm-1" && loaded.streamManagement.inboundHandled == 41)
        #expect(loaded.streamManagement.outboundAcknowledged == 9)
        #expect(loaded.streamManagement.unacknowledged == [.message(message), .presence(presence)])
        try await keeper.keep(nil)
        #expect(try await keeper.load() == nil)
    }

    @Test func aKeptStanzaThatNoLongerParsesStartsANewSession() {
        let stored = StoredXMPPSession(jid: JID("relay@localhost/isthmus")!, sessionID: "s", location: nil, inboundHandled: 0,
                                       outboundAcknowledged: 0, unacknowledged: ["<message"])
        #expect(StoreClientSessionKeeper.resumption(stored) == nil)
    }
}
