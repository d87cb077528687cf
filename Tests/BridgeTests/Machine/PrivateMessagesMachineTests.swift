@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing
import XMPP

/// MUC private messages through the portal machine: to whose DM, from which ghost, bounces reported.
@Suite struct PrivateMessagesMachineTests {
    func privateMessage(_ f: MachineFixture, from nick: String, to user: UserID, _ body: String, id: String? = "pm1",
                        occupantID: String? = nil) -> RoomMessage {
        RoomMessage(room: f.muc, nick: nick, to: f.puppetJID(user), id: id.flatMap(StanzaAttributeID.init), occupantID: occupantID.flatMap(OccupantID.init), body: body)
    }

    func inbound(_ f: MachineFixture, from nick: String, to user: UserID, _ body: String, ghost: UserID, identity: String,
                 id: String? = "pm1", occupantID: String? = nil) -> DirectChatRules.Inbound {
        .init(user: user, ghost: ghost, identity: identity, message: privateMessage(f, from: nick, to: user, body, id: id, occupantID: occupantID))
    }

    @Test func aPrivateMessageToAMatrixUsersOccupantGoesToTheirDMFromTheSendersGhost() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        _ = f.act(.xmppPresence(f.presence("romeo", occupantID: "occ1")))
        let ghost = f.ghost(of: "romeo", occupantID: "occ1")
        let identity = GhostMachine.identity(muc: f.muc, nick: "romeo", occupantID: OccupantID("occ1"), realJID: nil)
        #expect(f.act(.xmppPrivateMessage(privateMessage(f, from: "romeo", to: f.alice, "psst", occupantID: "occ1")))
                == [.directChats(.inbound(inbound(f, from: "romeo", to: f.alice, "psst", ghost: ghost, identity: identity, occupantID: "occ1")))])
    }

    @Test func afterANickChangeTheSameGhostSpeaks() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        _ = f.act(.xmppPresence(f.presence("romeo")))
        let ghost = f.ghost(of: "romeo")
        _ = f.act(.xmppPresence(f.presence("romeo", available: false, codes: [.nickChanged], newNick: "romeo2")))
        guard case .directChats(.inbound(let sent))? = f.act(.xmppPrivateMessage(privateMessage(f, from: "romeo2", to: f.alice, "hi"))).first else {
            Issue.record("not delivered")
            return
        }
        #expect(sent.ghost == ghost)
        #expect(sent.nick == "romeo2")
    }

    @Test func aBodylessReactionSetGoesToTheDMWithWhatItRefersToAndTheSendersKnownIdentity() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        _ = f.act(.xmppPresence(f.presence("romeo", occupantID: "occ1")))
        var reaction = RoomMessage(room: f.muc, nick: "romeo", to: f.puppetJID(f.alice), id: StanzaAttributeID("pm2"))
        reaction.references = MessageReferences(reactions: .init(id: "isthmus-pm-1", keys: ["👍"]))
        guard case .directChats(.inbound(let sent))? = f.act(.xmppPrivateMessage(reaction)).first else {
            Issue.record("not delivered")
            return
        }
        #expect(sent.message.references == reaction.references)
        // The occupant-id comes from the room's presence (the message map scopes his ids by it).
        #expect(sent.message.occupantID == OccupantID("occ1"))
        #expect(sent.file == nil)
        // Neither a body nor a reference: nothing to deliver.
        #expect(f.act(.xmppPrivateMessage(RoomMessage(room: f.muc, nick: "romeo", to: f.puppetJID(f.alice), id: StanzaAttributeID("pm3")))) == [])
    }

    /// A private message's muc#user element is the sender's own: a real JID claimed there would make the sender
    /// someone else's ghost (and let them correct or retract that person's messages in the DM).
    @Test func aRealJIDClaimedInAPrivateMessageIsNotTrusted() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        _ = f.act(.xmppPresence(f.presence("mallory")))
        var claim = privateMessage(f, from: "mallory", to: f.alice, "it's me, romeo")
        claim.realJID = JID("romeo@localhost")
        guard case .directChats(.inbound(let sent))? = f.act(.xmppPrivateMessage(claim)).first else {
            Issue.record("not delivered")
            return
        }
        #expect(sent.ghost == f.ghost(of: "mallory"))
        #expect(sent.message.realJID == nil)
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
        let bounce = RoomMessage(room: f.muc, nick: "romeo", to: f.puppetJID(f.alice), originID: originID, id: StanzaAttributeID(originID.rawValue), error: error)
        #expect(f.act(.xmppPrivateMessage(bounce)) == [.directChats(.bounce(DirectChatMachine.Bounce(originID: originID, nick: "romeo", error: error)))])
    }
}
