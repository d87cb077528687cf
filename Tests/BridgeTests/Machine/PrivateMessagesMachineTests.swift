@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing

/// MUC private messages through the portal machine: to whose DM, from which ghost, bounces reported.
@Suite struct PrivateMessagesMachineTests {
    func privateMessage(_ f: MachineFixture, from nick: String, to user: UserID, _ body: String, id: String? = "pm1",
                        occupantID: String? = nil) -> RoomMessage {
        RoomMessage(room: f.muc, nick: nick, to: f.puppetJID(user), id: id, occupantID: occupantID.flatMap(OccupantID.init), body: body)
    }

    func inbound(_ f: MachineFixture, from nick: String, to user: UserID, _ body: String, ghost: UserID, identity: String,
                 id: String? = "pm1") -> DirectChatRules.Inbound {
        .init(user: user, ghost: ghost, identity: identity, nick: nick, body: body, unstyled: false, stanzaID: id)
    }

    @Test func aPrivateMessageToAMatrixUsersOccupantGoesToTheirDMFromTheSendersGhost() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        _ = f.act(.xmppPresence(f.presence("romeo", occupantID: "occ1")))
        let ghost = f.ghost(of: "romeo", occupantID: "occ1")
        let identity = PortalStateMachine.ghostIdentity(muc: f.muc, nick: "romeo", occupantID: OccupantID("occ1"), realJID: nil)
        #expect(f.act(.xmppPrivateMessage(privateMessage(f, from: "romeo", to: f.alice, "psst", occupantID: "occ1")))
                == [.deliverPrivateToMatrix(inbound(f, from: "romeo", to: f.alice, "psst", ghost: ghost, identity: identity))])
    }

    @Test func afterANickChangeTheSameGhostSpeaks() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        _ = f.act(.xmppPresence(f.presence("romeo")))
        let ghost = f.ghost(of: "romeo")
        _ = f.act(.xmppPresence(f.presence("romeo", available: false, codes: [303], newNick: "romeo2")))
        guard case .deliverPrivateToMatrix(let sent)? = f.act(.xmppPrivateMessage(privateMessage(f, from: "romeo2", to: f.alice, "hi"))).first else {
            Issue.record("not delivered")
            return
        }
        #expect(sent.ghost == ghost)
        #expect(sent.nick == "romeo2")
    }

    @Test func privateMessagesToNobodyWeStandForOrFromOurOwnOccupantsAreDropped() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        // To bob, who has no occupant in this room; to the bridge's own occupant (consent answers come there).
        #expect(f.act(.xmppPrivateMessage(privateMessage(f, from: "romeo", to: f.bob, "hi"))) == [])
        var toBot = privateMessage(f, from: "romeo", to: f.alice, "hi")
        toBot.to = f.naming.botOccupant
        #expect(f.act(.xmppPrivateMessage(toBot)) == [])
        // From a Matrix user's own occupant (a puppet's nick): not an XMPP user.
        #expect(f.act(.xmppPrivateMessage(privateMessage(f, from: "Alice", to: f.alice, "echo"))) == [])
    }

    @Test func aBounceOfOneOfOurPrivateMessagesIsReported() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let originID = f.naming.privateOriginID(for: EventID("$dm1")!)
        let error = StanzaErrorInfo(condition: .itemNotFound, text: "Recipient not in room")
        let bounce = RoomMessage(room: f.muc, nick: "romeo", to: f.puppetJID(f.alice), originID: originID, id: originID.rawValue, error: error)
        #expect(f.act(.xmppPrivateMessage(bounce)) == [.reportPrivateBounce(originID: originID, nick: "romeo", error: error)])
    }
}
