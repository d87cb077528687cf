import IsthmusCommon
import IsthmusStore
import Testing

/// The message map's sender column: typed both ways, and rows written before it was typed still read right.
@Suite struct MessageSenderTests {
    @Test func everyKindSurvivesTheStoredForm() {
        let senders: [MessageSender] = [
            .matrix(UserID("@alice:localhost")!), .occupant(.realJID(JID("romeo@localhost")!)),
            .occupant(.occupantID(OccupantID("m_c2V")!)), .occupant(.nick("@looks:like-a-user")), .occupant(.nick("jid:not really")),
        ]
        for sender in senders {
            let direction: MessageMapping.Direction = sender.matrixUser == nil ? .xmppToMatrix : .matrixToXMPP
            #expect(MessageSender(stored: sender.description, direction: direction) == sender)
        }
    }

    @Test func legacyRowsAreReadByDirection() {
        #expect(MessageSender(stored: "@alice:localhost", direction: .matrixToXMPP) == .matrix(UserID("@alice:localhost")!))
        #expect(MessageSender(stored: "romeo@localhost", direction: .xmppToMatrix) == .occupant(.realJID(JID("romeo@localhost")!)))
        #expect(MessageSender(stored: "Romeo", direction: .xmppToMatrix) == .occupant(.nick("Romeo")))
    }
}
