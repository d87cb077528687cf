@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing

/// The invite sub-machine alone, over a room view written out by hand: a Matrix invite of a ghost → the inviter's
/// puppet's mediated invitation (the address from the room model or the store), its refusal told once; an XMPP
/// invitation of a puppet JID → a Matrix invite. (Through the portal machine: `RolesAndInvitesMachineTests`.)
@Suite struct InviteMachineTests {
    /// The machine and the room it sees.
    struct Fixture {
        let muc = JID("lounge@conference.localhost")!
        let alice = UserID("@alice:localhost")!
        let juliet = UserID("@_xmpp_juliet:localhost")!
        let aliceOccupant = JID("lounge@conference.localhost/Alice")!
        let t0 = ContinuousClock.now
        var machine = InviteMachine()
        var realJIDs: [UserID: JID] = [:]
        var puppets: [JID: UserID] = [:]
        var nicks: [JID: String] = [:]

        var view: InviteMachine.Room {
            let (realJIDs, puppets, nicks) = (realJIDs, puppets, nicks)
            return InviteMachine.Room(knownRealJID: { realJIDs[$0] }, name: { $0 == UserID("@alice:localhost")! ? "Alice" : $0.localpart },
                                      originID: { OriginID("isthmus-\($0.rawValue.dropFirst())")! }, bridgedUser: { puppets[$0.bare] },
                                      isBridge: { $0.bare == JID("relay@localhost")! }, occupantNick: { nicks[$0.bare] }, muc: muc)
        }

        mutating func act(_ input: InviteMachine.Input, at now: ContinuousClock.Instant? = nil) -> [InviteMachine.Output] {
            machine.receive(input, in: view, now: now ?? t0).filter { if case .perform(.log) = $0 { false } else { true } }
        }

        func invite(_ seq: Int64, reason: String? = nil, invitee: JID? = nil) -> InviteMachine.GhostInvite {
            .init(inviter: alice, ghost: juliet, reason: reason, seq: seq, eventID: EventID("$e\(seq)")!, invitee: invitee)
        }

        func id(_ seq: Int64) -> OriginID { OriginID("isthmus-e\(seq)")! }
    }

    @Test func aKnownAddressNeedsThePuppetThenTheInvitationGoesOutAndTheEventIsDone() {
        var f = Fixture()
        let juliet = JID("juliet@capulet.example")!
        f.realJIDs[f.juliet] = JID("juliet@capulet.example/balcony")
        #expect(f.act(.ghostInvited(f.invite(1, reason: "come back"))) == [.portal(.puppet(f.invite(1, reason: "come back", invitee: juliet)))])
        #expect(f.act(.puppetReady(f.invite(1, reason: "come back", invitee: juliet), occupant: f.aliceOccupant))
                == [.perform(.sendInvite(from: f.aliceOccupant, to: juliet, reason: "come back", id: f.id(1))), .perform(.dequeue(seq: 1))])
    }

    @Test func anUnknownAddressIsLookedUpAndWhenNoneIsFoundToldInTheRoom() {
        var f = Fixture()
        let romeo = JID("romeo@montague.example")!
        #expect(f.act(.ghostInvited(f.invite(1))) == [.perform(.lookUpGhostAddress(f.invite(1)))])
        #expect(f.act(.ghostAddressFound(f.invite(1), romeo)) == [.portal(.puppet(f.invite(1, invitee: romeo)))])
        #expect(f.act(.ghostInvited(f.invite(2))) == [.perform(.lookUpGhostAddress(f.invite(2)))])
        #expect(f.act(.ghostAddressFound(f.invite(2), nil)) == [
            .perform(.postNotice("⚠️ Alice's invitation was not sent to XMPP: the XMPP room did not reveal that user's address, so the "
                                 + "bridge cannot invite them.", subject: "invite:$e2")),
            .perform(.dequeue(seq: 2)),
        ])
    }

    @Test func aRefusalOfOneOfOurInvitationsIsToldOnceAndOthersAreNotOurs() {
        var f = Fixture()
        let juliet = JID("juliet@capulet.example")!
        _ = f.act(.puppetReady(f.invite(1, invitee: juliet), occupant: f.aliceOccupant))
        let error = StanzaErrorInfo(condition: .notAllowed, text: "Invitations are not allowed in this conference")
        #expect(f.act(.refused(f.id(2), error)) == [], "not ours")
        #expect(f.act(.refused(f.id(1), error)) == [
            .perform(.postNotice("⚠️ Alice's invitation could not be delivered to the XMPP room (not-allowed: Invitations are not allowed "
                                 + "in this conference).", subject: "invite-refused:$e1")),
        ])
        #expect(f.act(.refused(f.id(1), error)) == [], "told once")
    }

    @Test func onlyTheLatestInvitationsAreRememberedForTheirRefusals() {
        var f = Fixture()
        let juliet = JID("juliet@capulet.example")!
        for seq in 1...Int64(InviteMachine.maxPendingInvites + 1) {
            _ = f.act(.puppetReady(f.invite(seq, invitee: juliet), occupant: f.aliceOccupant))
        }
        let error = StanzaErrorInfo(condition: .notAllowed)
        #expect(f.act(.refused(f.id(1), error)) == [], "forgotten")
        #expect(f.act(.refused(f.id(2), error)).count == 1)
    }

    @Test func anXMPPInvitationOfAPuppetJIDInvitesItsUserAndAnythingElseIsLoggedAtMostOnceAMinute() {
        var f = Fixture()
        let puppet = JID("alice@bridge.localhost")!
        let romeo = JID("romeo@montague.example/phone")!
        f.puppets[puppet] = f.alice
        f.nicks[romeo.bare] = "Romeo"
        #expect(f.act(.xmppInvite(RoomInvite(room: f.muc, invitee: puppet, inviter: romeo, reason: "join us")))
                == [.perform(.inviteToMatrix(f.alice, reason: "Romeo invited you from the XMPP room: join us"))])
        #expect(f.act(.xmppInvite(RoomInvite(room: f.muc, invitee: puppet, inviter: nil, reason: nil)))
                == [.perform(.inviteToMatrix(f.alice, reason: "Invited from the XMPP room"))])
        let odd = InviteMachine.Input.xmppInvite(RoomInvite(room: f.muc, invitee: JID("nobody@bridge.localhost")!, inviter: nil, reason: nil))
        #expect(f.machine.receive(odd, in: f.view, now: f.t0).count == 1)
        #expect(f.machine.receive(odd, in: f.view, now: f.t0 + .seconds(30)) == [])
        #expect(f.machine.receive(odd, in: f.view, now: f.t0 + .seconds(61)).count == 1)
    }

    @Test func anInvitationOfTheBridgeItselfIsThePortalMachinesToAct() {
        var f = Fixture()
        let direct = RoomInvite(room: f.muc, invitee: JID("relay@localhost")!, inviter: JID("owner@montague.example")!, reason: "come in")
        #expect(f.act(.xmppInvite(direct)) == [.portal(.botInvited(direct))])
    }

    @Test func onlyTheLookUpAwaitsAnOutcome() {
        let f = Fixture()
        #expect(InviteMachine.Action.lookUpGhostAddress(f.invite(1)).awaitsOutcome)
        #expect(!InviteMachine.Action.dequeue(seq: 1).awaitsOutcome)
    }
}
