@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing

/// MUC roles → ghosts' power levels (coalesced, revoked, only once the occupant list is complete) and invitations
/// both ways, through the portal machine.
@Suite struct RolesAndInvitesMachineTests {
    func occupant(_ f: MachineFixture, _ nick: String, _ affiliation: MUCAffiliation?, _ role: MUCRole?,
                  available: Bool = true, realJID: JID? = nil) -> RoomPresence {
        RoomPresence(room: f.muc, nick: nick, to: f.naming.botOccupant, available: available, realJID: realJID,
                     affiliation: affiliation, role: role)
    }

    /// Feeds a presence and the outcome of the ghost setup it asks for; returns every action but the setup and logs.
    func present(_ f: inout MachineFixture, _ presence: RoomPresence) -> [PortalStateMachine.Action] {
        var actions = f.act(.xmppPresence(presence))
        if case .ghosts(.prepare(let setup))? = actions.last {
            actions.removeLast()
            actions += f.act(.ghosts(.prepared(setup, error: nil)))
        }
        return actions
    }

    /// Matrix client mode: ghosts are names, so the MUC's roles give no power levels — nothing is ever sent, and no
    /// warning about the account's own lack of power follows.
    @Test func withTheMatrixAccountSpeakingForOccupantsNoPowerLevelsAreSent() {
        var f = MachineFixture(matrixRelay: MatrixRelayFormat())
        f.activate()
        #expect(present(&f, occupant(f, "owner", .owner, .moderator)) == [])
        #expect(f.act(.reconcileGhosts).filter { if case .roles(.applyGhostPowerLevels) = $0 { true } else { false } } == [])
        #expect(present(&f, occupant(f, "mod", .member, .moderator)) == [])
        #expect(f.act(.syncPowerLevels) == [])
    }

    @Test func aJoinBurstMakesOneChangeOnceTheOccupantListIsComplete() {
        var f = MachineFixture()
        f.activate()
        // The presences that arrive with the bot's join: nothing is sent before the list is complete.
        #expect(present(&f, occupant(f, "owner", .owner, .moderator)) == [])
        #expect(present(&f, occupant(f, "admin", .admin, .moderator)) == [])
        for index in 0..<50 { #expect(present(&f, occupant(f, "guest\(index)", MUCAffiliation.none, .participant)) == []) }
        #expect(present(&f, occupant(f, "mod", .member, .moderator)) == [])
        let wanted = GhostPowerLevels(wanted: [f.ghost(of: "owner"): 100, f.ghost(of: "admin"): 50, f.ghost(of: "mod"): 50])
        #expect(f.act(.reconcileGhosts) == [.roles(.applyGhostPowerLevels(wanted))])
        #expect(f.act(.roles(.powerLevelsApplied(wanted, .updated(capped: [], untouchable: [])))) == [])
        // Later, a burst of grants: the first queues one sync, the rest ride along; the sync sends one change.
        #expect(present(&f, occupant(f, "guest1", .member, .moderator)) == [.roles(.queuePowerLevelSync)])
        #expect(present(&f, occupant(f, "guest2", .admin, .moderator)) == [])
        #expect(present(&f, occupant(f, "guest3", .owner, .moderator)) == [])
        var more = wanted
        more.wanted[f.ghost(of: "guest1")] = 50
        more.wanted[f.ghost(of: "guest2")] = 50
        more.wanted[f.ghost(of: "guest3")] = 100
        #expect(f.act(.syncPowerLevels) == [.roles(.applyGhostPowerLevels(more))])
        // A sync with nothing new sends nothing; a presence that changes nothing queues nothing.
        #expect(f.act(.syncPowerLevels) == [])
        #expect(present(&f, occupant(f, "guest1", .member, .moderator)) == [])
    }

    @Test func aRevokedRoleOrALeaveTakesTheLevelAway() {
        var f = MachineFixture()
        f.activate()
        _ = present(&f, occupant(f, "mod", .member, .moderator))
        _ = present(&f, occupant(f, "boss", .owner, .moderator))
        let both = GhostPowerLevels(wanted: [f.ghost(of: "mod"): 50, f.ghost(of: "boss"): 100])
        #expect(f.act(.reconcileGhosts) == [.roles(.applyGhostPowerLevels(both))])
        _ = f.act(.roles(.powerLevelsApplied(both, .updated(capped: [], untouchable: []))))
        // The moderator role is revoked (a new presence with role participant).
        #expect(present(&f, occupant(f, "mod", .member, .participant)) == [.roles(.queuePowerLevelSync)])
        #expect(f.act(.syncPowerLevels) == [.roles(.applyGhostPowerLevels(GhostPowerLevels(wanted: [f.ghost(of: "boss"): 100])))])
        // The owner leaves: its ghost leaves, and its level goes with the next sync.
        let leaving = f.act(.xmppPresence(occupant(f, "boss", .owner, MUCRole.none, available: false)))
        #expect(leaving.contains(.roles(.queuePowerLevelSync)))
        #expect(f.act(.syncPowerLevels) == [.roles(.applyGhostPowerLevels(GhostPowerLevels(wanted: [:])))])
    }

    @Test func configuredLevelsApplyAndZeroGivesNone() {
        var f = MachineFixture()
        f.machine = PortalStateMachine(configuration: {
            var configuration = f.machine.configuration
            configuration.roleLevels = RoleLevels(owner: 75, admin: 60, moderator: 0)
            return configuration
        }())
        f.activate()
        _ = present(&f, occupant(f, "boss", .owner, .moderator))
        _ = present(&f, occupant(f, "mod", .member, .moderator))
        _ = present(&f, occupant(f, "adm", .admin, .moderator))
        #expect(f.act(.reconcileGhosts) == [.roles(.applyGhostPowerLevels(GhostPowerLevels(wanted: [f.ghost(of: "boss"): 75, f.ghost(of: "adm"): 60])))])
    }

    @Test func aFailedChangeIsTriedAgainAndMissingPowerIsLoggedOnce() {
        var f = MachineFixture()
        f.activate()
        _ = present(&f, occupant(f, "boss", .owner, .moderator))
        let wanted = GhostPowerLevels(wanted: [f.ghost(of: "boss"): 100])
        #expect(f.act(.reconcileGhosts) == [.roles(.applyGhostPowerLevels(wanted))])
        #expect(f.act(.roles(.powerLevelsApplied(wanted, .failed(.unavailable("down"))))) == [])
        #expect(f.act(.syncPowerLevels) == [.roles(.applyGhostPowerLevels(wanted))], "nothing was applied: tried again")
        let first = f.machine.receive(.roles(.powerLevelsApplied(wanted, .noPower(have: 0, need: 50))), now: f.t0)
        #expect(first.count == 1, "the lack of power is logged")
        #expect(f.machine.receive(.roles(.powerLevelsApplied(wanted, .noPower(have: 0, need: 50))), now: f.t0) == [], "once")
    }

    // MARK: Invites

    func invite(_ f: MachineFixture, _ seq: Int64, ghost: UserID, by inviter: UserID, reason: String? = nil) -> QueuedMatrixEvent {
        f.member(seq, ghost, .invite, by: inviter, reason: reason)
    }

    @Test func aMatrixInviteOfAGhostBecomesAMediatedInvitationFromTheInvitersPuppet() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let juliet = JID("juliet@localhost")!
        _ = present(&f, occupant(f, "Juliet", .member, .participant, realJID: juliet))
        let ghost = f.machine.occupants["Juliet"]!.ghost!
        let event = invite(f, 1, ghost: ghost, by: f.alice, reason: "come back")
        let id = f.naming.originID(for: event.event.eventID)
        #expect(f.act(.matrixEvents([event])) == [.invites(.sendInvite(from: f.puppetJID(f.alice), to: juliet, reason: "come back", id: id)),
                                                  .invites(.dequeue(seq: 1))])
    }

    @Test func aRefusedInvitationIsToldInTheMatrixRoomOnce() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let juliet = JID("juliet@localhost")!
        _ = present(&f, occupant(f, "Juliet", .member, .participant, realJID: juliet))
        let event = invite(f, 1, ghost: f.machine.occupants["Juliet"]!.ghost!, by: f.alice)
        _ = f.act(.matrixEvents([event]))
        let id = f.naming.originID(for: event.event.eventID)
        // ejabberd's answer when the room does not let occupants invite (its id is our invitation's).
        let bounce = RoomMessage(room: f.muc, nick: "", to: f.puppetJID(f.alice), id: StanzaAttributeID(id.rawValue),
                                 error: StanzaErrorInfo(condition: .notAllowed, text: "Invitations are not allowed in this conference"))
        let told = f.act(.xmppMessage(bounce))
        #expect(told == [.invites(.postNotice("⚠️ Alice's invitation could not be delivered to the XMPP room (not-allowed: Invitations are not "
                                              + "allowed in this conference).", subject: "invite-refused:\(event.event.eventID.rawValue)"))])
        // A second copy is no invitation of ours any more: looked up as a message, like any bounce.
        #expect(f.act(.xmppMessage(bounce)) == [.xmppDelivery(.lookUpOwnMessage(id, error: bounce.error!))])
    }

    @Test func aGhostOfAnotherRoomIsLookedUpAndAnUnknownAddressIsToldInTheRoom() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let stranger = UserID("@_xmpp_stranger:localhost")!
        let event = invite(f, 1, ghost: stranger, by: f.alice)
        let job = InviteMachine.GhostInvite(inviter: f.alice, ghost: stranger, reason: nil, seq: 1, eventID: event.event.eventID)
        #expect(f.act(.matrixEvents([event])) == [.invites(.lookUpGhostAddress(job))])
        let romeo = JID("romeo@localhost")!
        #expect(f.act(.invites(.ghostAddressFound(job, romeo)))
                == [.invites(.sendInvite(from: f.puppetJID(f.alice), to: romeo, reason: nil, id: f.naming.originID(for: event.event.eventID))),
                    .invites(.dequeue(seq: 1))])
        // A ghost whose real JID the room never revealed: a notice says why nothing went to XMPP.
        let second = invite(f, 2, ghost: stranger, by: f.alice)
        let secondJob = InviteMachine.GhostInvite(inviter: f.alice, ghost: stranger, reason: nil, seq: 2, eventID: second.event.eventID)
        #expect(f.act(.matrixEvents([second])) == [.invites(.lookUpGhostAddress(secondJob))])
        let told = f.act(.invites(.ghostAddressFound(secondJob, nil)))
        guard case .invites(.postNotice(let text, _))? = told.first else {
            Issue.record("no notice: \(told)")
            return
        }
        #expect(text.contains("did not reveal that user's address"))
        #expect(!text.contains("@"), "no Matrix or XMPP ids in the notice")
        #expect(told.last == .invites(.dequeue(seq: 2)))
    }

    @Test func invitesOfUsersOrByGhostsAreNotMediatedInvitations() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        // A ghost inviting a ghost (our own doing) and a Matrix user inviting a Matrix user: nothing for the MUC.
        let ghost = f.ghost(of: "romeo")
        #expect(f.act(.matrixEvents([invite(f, 1, ghost: ghost, by: f.ghost(of: "juliet"))])) == [.dequeue(seq: 1)])
        #expect(f.act(.matrixEvents([f.member(2, f.bob, .invite, by: f.alice)])) == [.dequeue(seq: 2)])
    }

    @Test func anXMPPInviteOfAPuppetJIDInvitesThatMatrixUser() {
        var f = MachineFixture()
        f.activate()
        let romeo = JID("romeo@localhost/phone")!
        _ = present(&f, occupant(f, "Romeo", .member, .participant, realJID: romeo))
        // bob has never been in this room: his puppet JID names him.
        let invite = RoomInvite(room: f.muc, invitee: f.puppetJID(f.bob).bare, inviter: romeo, reason: "join us")
        #expect(f.act(.xmppInvite(invite)) == [.invites(.inviteToMatrix(f.bob, reason: "Romeo invited you from the XMPP room: join us"))])
        let anonymous = RoomInvite(room: f.muc, invitee: f.puppetJID(f.bob), inviter: nil, reason: nil)
        #expect(f.act(.xmppInvite(anonymous)) == [.invites(.inviteToMatrix(f.bob, reason: "Invited from the XMPP room"))])
    }

    @Test func anXMPPInviteOfSomethingElseIsLoggedAtMostOnceAMinute() {
        var f = MachineFixture()
        f.activate()
        let odd = RoomInvite(room: f.muc, invitee: JID("nobody@bridge.localhost")!, inviter: nil, reason: nil)
        #expect(f.machine.receive(.event(.xmppInvite(odd)), now: f.t0).count == 1)
        #expect(f.machine.receive(.event(.xmppInvite(odd)), now: f.t0 + .seconds(30)) == [])
        let ours = RoomInvite(room: f.muc, invitee: f.naming.botOccupant.bare, inviter: nil, reason: nil)
        #expect(f.machine.receive(.event(.xmppInvite(ours)), now: f.t0 + .seconds(61)).count == 1)
    }

    @Test func puppetJIDsReadBackToTheirUsers() {
        let naming = BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!
        for raw in ["@alice:localhost", "@a.b_c=d/e:example.org", "@x:[::1]:8448"] {
            let user = UserID(raw)!
            #expect(naming.matrixUser(forPuppet: naming.puppetJID(for: user)!) == user, "\(raw)")
        }
        #expect(naming.matrixUser(forPuppet: JID("alice\\3alocalhost@elsewhere.org")!) == nil, "not under our component")
        #expect(naming.matrixUser(forPuppet: JID("bridge.localhost")!) == nil)
    }

    // MARK: The opt-in: Matrix moderators → MUC moderator role

    func powerLevels(_ f: MachineFixture, _ seq: Int64, _ users: [UserID: Int64]) -> QueuedMatrixEvent {
        QueuedMatrixEvent(seq: seq, event: MatrixRoomEvent(eventID: EventID("$p\(seq)")!, room: f.room, sender: f.alice, stateKey: "",
                                                           content: .powerLevels(users: users, usersDefault: 0)))
    }

    @Test func withoutTheOptInAMatrixPowerLevelChangeTouchesNothingInTheMUC() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice", f.bob: "Bob"])
        #expect(f.act(.matrixEvents([powerLevels(f, 1, [f.bob: 100])])) == [.dequeue(seq: 1)])
    }

    @Test func withTheOptInMatrixModeratorsOccupantsGetTheModeratorRoleAndLoseIt() {
        var f = MachineFixture()
        var configuration = f.machine.configuration
        configuration.matrixModeratorsToMUC = true
        f.machine = PortalStateMachine(configuration: configuration)
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        _ = f.act(.botJoinedMUC(f.botJoin, .joined(nick: "Matrix", created: false)))
        _ = f.act(.catchUp(.featuresRead(RoomFeatures(stanzaIDs: true, archive: true))))
        _ = f.act(.roomLoaded(f.snapshot(first: true)))
        var next = f.act(.puppets(.membersFetched([f.alice: "Alice", f.bob: "Bob"])))
        while case .puppets(.join(let join))? = next.last { next = f.act(.puppets(.joinAnswered(join, .joined(nick: join.nick, created: false)))) }
        if case .loadUndelivered? = next.last { next = f.act(.undeliveredLoaded([])) }
        #expect(next.last == .roles(.readMatrixPower), "the room's power is read before the activation ends")
        // Alice created the (version 12) room: unlimited power; bob has 50. Both occupants become MUC moderators.
        let state = RoomPowerState(roomVersion: "12", creators: [f.alice], powerLevels: .object(["users": .object([f.bob.rawValue: .integer(50)])]))
        let granted = f.act(.roles(.matrixPowerRead(state)))
        #expect(Array(granted.prefix(2)) == [.roles(.setMUCRole(nick: "Alice", role: .moderator)), .roles(.setMUCRole(nick: "Bob", role: .moderator))])
        #expect(granted.last == .catchUp(.readTimeline))
        _ = f.act(.catchUp(.inboxRead([])))
        // Bob drops below 50: his occupant goes back to participant; a change that moves nobody does nothing.
        #expect(f.act(.matrixEvents([powerLevels(f, 1, [f.bob: 49])])) == [.roles(.setMUCRole(nick: "Bob", role: .participant)), .dequeue(seq: 1)])
        #expect(f.act(.matrixEvents([powerLevels(f, 2, [f.bob: 10])])) == [.dequeue(seq: 2)])
        #expect(f.act(.matrixEvents([powerLevels(f, 3, [f.bob: 50])])) == [.roles(.setMUCRole(nick: "Bob", role: .moderator)), .dequeue(seq: 3)])
    }
}

/// The provisioning API's link request: the opt-in is read, and absent means off.
@Suite struct ProvisioningLinkRequestTests {
    @Test func theModeratorOptInIsReadAndOffWhenAbsent() throws {
        let plain = try JSONDecoder().decode(ProvisioningAPI.LinkRequest.self,
                                             from: Data(#"{"matrix_room": "!r:localhost", "muc": "a@muc.localhost"}"#.utf8))
        #expect(plain.matrixModeratorsToMUC == nil)
        let opted = try JSONDecoder().decode(ProvisioningAPI.LinkRequest.self, from: Data(
            #"{"matrix_room": "!r:localhost", "muc": "a@muc.localhost", "matrix_moderators_to_muc": true}"#.utf8))
        #expect(opted.matrixModeratorsToMUC == true)
    }
}
