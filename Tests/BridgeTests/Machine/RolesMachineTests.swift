@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing

/// The roles sub-machine alone, over a room view written out by hand: power levels coalesced and held back until the
/// occupant list is complete, Matrix moderators' MUC roles, the ownership handover. (Through the portal machine:
/// `RolesAndInvitesMachineTests`, `OwnershipMachineTests`.)
@Suite struct RolesMachineTests {
    /// The machine and the room it sees (log lines are left out of what ``act(_:)`` returns).
    struct Fixture {
        let room = RoomID("!room:localhost")!
        let muc = JID("lounge@conference.localhost")!
        let romeo = UserID("@_xmpp_romeo:localhost")!
        let juliet = UserID("@_xmpp_juliet:localhost")!
        let alice = UserID("@alice:localhost")!
        let bob = UserID("@bob:localhost")!
        var machine = RolesMachine()
        var occupants: [RolesMachine.Occupant] = []
        var puppets: [Puppet] = []
        var botJoined = true
        var matrixModeratorsToMUC = false

        var view: RolesMachine.Room {
            let (occupants, puppets) = (occupants, puppets)
            return RolesMachine.Room(occupants: { occupants }, joinedPuppets: { puppets.filter(\.joined) }, xmppConnected: true,
                                     botJoined: botJoined, roleLevels: RoleLevels(), matrixModeratorsToMUC: matrixModeratorsToMUC,
                                     muc: muc)
        }

        mutating func act(_ input: RolesMachine.Input) -> [RolesMachine.Action] {
            machine.receive(input, in: view).filter { if case .log = $0 { false } else { true } }
        }

        /// Every action, log lines included.
        mutating func all(_ input: RolesMachine.Input) -> [RolesMachine.Action] {
            machine.receive(input, in: view)
        }

        func puppet(_ user: UserID, _ nick: String, joined: Bool = true) -> Puppet {
            Puppet(room: room, user: user, occupant: JID("\(user.localpart)@bridge.localhost")!, nick: nick, displayname: nick, joined: joined)
        }
    }

    func levels(_ actions: [RolesMachine.Action]) -> [Logger.Level] {
        actions.compactMap { if case .log(let entry) = $0 { entry.level } else { nil } }
    }

    // MARK: Power levels

    @Test func nothingIsSentBeforeTheOccupantListIsCompleteThenOneChangePerBurst() {
        var f = Fixture()
        f.occupants = [.init(ghost: f.romeo, affiliation: .owner, role: .moderator)]
        #expect(f.act(.occupantsChanged) == [], "the list is not complete yet")
        #expect(f.act(.syncPowerLevels) == [])
        let owner = GhostPowerLevels(wanted: [f.romeo: 100])
        #expect(f.act(.occupantListComplete) == [.applyGhostPowerLevels(owner)])
        #expect(f.act(.powerLevelsApplied(owner, .updated(capped: [], untouchable: []))) == [])
        // A burst: the first change queues one sync, the rest ride along; the sync sends the levels of them all.
        f.occupants.append(.init(ghost: f.juliet, affiliation: .member, role: .moderator))
        #expect(f.act(.occupantsChanged) == [.queuePowerLevelSync])
        f.occupants[0].role = .participant
        #expect(f.act(.occupantsChanged) == [])
        let both = GhostPowerLevels(wanted: [f.romeo: 100, f.juliet: 50])
        #expect(f.act(.syncPowerLevels) == [.applyGhostPowerLevels(both)])
        #expect(f.act(.syncPowerLevels) == [], "nothing new")
        #expect(f.act(.occupantsChanged) == [], "the wanted levels are those sent")
    }

    @Test func aNewJoinHoldsTheLevelsBackUntilItsListIsComplete() {
        var f = Fixture()
        f.occupants = [.init(ghost: f.romeo, affiliation: .admin, role: .moderator)]
        let admin = GhostPowerLevels(wanted: [f.romeo: 50])
        #expect(f.act(.occupantListComplete) == [.applyGhostPowerLevels(admin)])
        #expect(f.act(.occupantListCleared) == [])
        f.occupants = []
        #expect(f.act(.occupantsChanged) == [], "romeo's presence may not have arrived yet")
        #expect(f.act(.occupantListComplete) == [.applyGhostPowerLevels(GhostPowerLevels(wanted: [:]))], "now he is gone")
    }

    @Test func withoutTheBotInTheRoomASyncSendsNothing() {
        var f = Fixture()
        f.occupants = [.init(ghost: f.romeo, affiliation: .owner, role: .moderator)]
        f.botJoined = false
        #expect(f.act(.occupantListComplete) == [])
        f.botJoined = true
        #expect(f.act(.syncPowerLevels) == [.applyGhostPowerLevels(GhostPowerLevels(wanted: [f.romeo: 100]))])
    }

    @Test func aFailedChangeIsTriedAgainAndMissingPowerIsLoggedOnce() {
        var f = Fixture()
        f.occupants = [.init(ghost: f.romeo, affiliation: .owner, role: .moderator)]
        let wanted = GhostPowerLevels(wanted: [f.romeo: 100])
        #expect(f.act(.occupantListComplete) == [.applyGhostPowerLevels(wanted)])
        #expect(levels(f.all(.powerLevelsApplied(wanted, .failed(.unavailable("down"))))) == [.warning])
        #expect(f.act(.occupantsChanged) == [.queuePowerLevelSync], "nothing was applied")
        #expect(f.act(.syncPowerLevels) == [.applyGhostPowerLevels(wanted)])
        #expect(levels(f.all(.powerLevelsApplied(wanted, .noPower(have: 0, need: 50)))) == [.warning])
        #expect(f.all(.powerLevelsApplied(wanted, .noPower(have: 0, need: 50))) == [], "once")
        #expect(levels(f.all(.powerLevelsApplied(wanted, .updated(capped: [f.romeo], untouchable: [])))) == [.info, .notice])
    }

    // MARK: Matrix moderators → MUC roles

    @Test func withoutTheOptInMatrixPowerIsNeitherReadNorFollowed() {
        var f = Fixture()
        f.puppets = [f.puppet(f.bob, "Bob")]
        #expect(f.act(.puppetsSynced) == [])
        #expect(f.act(.matrixPowerLevelsChanged(users: [f.bob: 100], usersDefault: 0)) == [])
    }

    @Test func withTheOptInMatrixModeratorsOccupantsGetTheModeratorRoleAndLoseIt() {
        var f = Fixture()
        f.matrixModeratorsToMUC = true
        f.puppets = [f.puppet(f.bob, "Bob"), f.puppet(f.alice, "Alice"), f.puppet(UserID("@carol:localhost")!, "Carol", joined: false)]
        #expect(f.act(.puppetsSynced) == [.readMatrixPower])
        // Alice created the (version 12) room: unlimited power; bob has 50; carol's puppet is not in the MUC.
        let state = RoomPowerState(roomVersion: "12", creators: [f.alice],
                                   powerLevels: .object(["users": .object([f.bob.rawValue: .integer(50), "@carol:localhost": .integer(100)])]))
        #expect(f.act(.matrixPowerRead(state)) == [.setMUCRole(nick: "Alice", role: .moderator), .setMUCRole(nick: "Bob", role: .moderator)])
        #expect(f.act(.matrixPowerLevelsChanged(users: [f.bob: 49], usersDefault: 0)) == [.setMUCRole(nick: "Bob", role: .participant)])
        #expect(f.act(.matrixPowerLevelsChanged(users: [f.bob: 10], usersDefault: 0)) == [], "moves nobody")
        #expect(f.act(.matrixPowerLevelsChanged(users: [f.bob: 50], usersDefault: 0)) == [.setMUCRole(nick: "Bob", role: .moderator)])
        // Bob's occupant rejoins with the room's default role: made moderator again.
        #expect(f.act(.puppetJoined(f.bob)) == [.setMUCRole(nick: "Bob", role: .moderator)])
        // Bob's puppet leaves for good; a new one is no moderator of the bridge's making, so nothing is taken back.
        #expect(f.act(.puppetRemoved(f.bob)) == [])
        f.puppets.removeAll { $0.user == f.bob }
        #expect(f.act(.matrixPowerLevelsChanged(users: [:], usersDefault: 0)) == [])
    }

    @Test func anUnreadablePowerStateWaitsForTheNextChange() {
        var f = Fixture()
        f.matrixModeratorsToMUC = true
        f.puppets = [f.puppet(f.bob, "Bob")]
        #expect(levels(f.all(.matrixPowerRead(nil))) == [.warning])
        #expect(f.act(.puppetJoined(f.bob)) == [], "nothing known of Matrix power yet")
        #expect(f.act(.matrixPowerLevelsChanged(users: [f.bob: 50], usersDefault: 0)) == [.setMUCRole(nick: "Bob", role: .moderator)])
    }

    // MARK: Ownership

    typealias Plan = RolesMachine.OwnershipPlan

    @Test func theHandoverIsAskedOncePerPortalAndAgainAfterAFailure() {
        var f = Fixture()
        #expect(f.act(.botJoined(created: false, affiliation: .member)) == [.changeAffiliations(.handOver)])
        let timedOut = RolesMachine.OwnershipFailure(step: 0, failure: .timeout)
        #expect(levels(f.all(.affiliationsChanged(.handOver, timedOut))) == [.info])
        #expect(f.act(.botJoined(created: false, affiliation: .owner)) == [.readOwnership], "asked again")
        #expect(f.act(.ownershipRead(nil)) == [])
        #expect(f.act(.botJoined(created: false, affiliation: .owner)) == [.readOwnership])
        let removal = Plan(changes: [.init(of: .domain, to: .none, askedBy: .bot)])
        #expect(f.act(.ownershipRead(.init(botOwner: true, domainOwner: true, domainAdmin: false))) == [.changeAffiliations(removal)])
        #expect(levels(f.all(.affiliationsChanged(removal, nil))) == [.notice])
        #expect(f.act(.botJoined(created: false, affiliation: .owner)) == [], "settled")
    }

    @Test func aRefusedProbeACreatedRoomOrCleanListsSettleIt() {
        var probed = Fixture()
        #expect(probed.act(.botJoined(created: false, affiliation: MUCAffiliation.none)) == [.changeAffiliations(.handOver)])
        let refused = RolesMachine.OwnershipFailure(step: 0, failure: .refused(StanzaErrorInfo(condition: .forbidden)))
        #expect(levels(probed.all(.affiliationsChanged(.handOver, refused))) == [.debug])
        #expect(probed.act(.botJoined(created: false, affiliation: .member)) == [])

        var created = Fixture()
        #expect(created.act(.botJoined(created: true, affiliation: .owner)) == [])
        #expect(created.act(.botJoined(created: false, affiliation: .member)) == [])

        var clean = Fixture()
        #expect(clean.act(.botJoined(created: false, affiliation: .owner)) == [.readOwnership])
        #expect(clean.act(.ownershipRead(.init(botOwner: true, domainOwner: false, domainAdmin: false))) == [])
        #expect(clean.act(.botJoined(created: false, affiliation: .owner)) == [])

        var unsaid = Fixture()
        #expect(unsaid.act(.botJoined(created: false, affiliation: nil)) == [], "nothing to go on")
        #expect(unsaid.act(.botJoined(created: false, affiliation: .owner)) == [.readOwnership], "not settled")
    }

    @Test func onlyTheReadsAndChangesAwaitAnOutcome() {
        let awaited: [RolesMachine.Action] = [.applyGhostPowerLevels(GhostPowerLevels(wanted: [:])), .readMatrixPower, .readOwnership,
                                              .changeAffiliations(.handOver)]
        #expect(awaited.map(\.awaitsOutcome) == [true, true, true, true])
        let notAwaited: [RolesMachine.Action] = [.queuePowerLevelSync, .setMUCRole(nick: "Bob", role: .moderator),
                                                 .log(.init(level: .info, message: "x"))]
        #expect(notAwaited.map(\.awaitsOutcome) == [false, false, false])
    }
}
