@testable import Bridge
import Foundation
import IsthmusCommon
import Testing

/// Taking a room's ownership over from the component's domain JID (the bridge's occupant in earlier versions), as
/// literal sequences of the portal machine.
@Suite struct OwnershipMachineTests {
    typealias Plan = RolesMachine.OwnershipPlan
    typealias Lists = RolesMachine.OwnershipLists
    typealias Change = Plan.Change

    let removal = Change(of: .domain, to: .none, askedBy: .bot)

    @Test func withTheBotOwnerTheListsDecide() {
        // Nothing of the domain's: nothing to do.
        #expect(RolesMachine.ownershipPlan(Lists(botOwner: true, domainOwner: false, domainAdmin: false)) == nil)
        #expect(RolesMachine.ownershipPlan(Lists(botOwner: false, domainOwner: false, domainAdmin: false)) == nil)
        // The bot owns the room itself: the domain goes, whatever it is.
        #expect(RolesMachine.ownershipPlan(Lists(botOwner: true, domainOwner: true, domainAdmin: false)) == Plan(changes: [removal]))
        #expect(RolesMachine.ownershipPlan(Lists(botOwner: true, domainOwner: false, domainAdmin: true)) == Plan(changes: [removal]))
        // The bot's ownership is ejabberd's fallback from the domain: an entry of its own first, then ownership.
        #expect(RolesMachine.ownershipPlan(Lists(botOwner: false, domainOwner: true, domainAdmin: false)) == Plan(changes: [
            Change(of: .bot, to: .admin, askedBy: .bot), Change(of: .bot, to: .owner, askedBy: .domain), removal]))
    }

    /// Joins the bot's occupant with `outcome` after the Matrix side is up; returns the actions (logs left out).
    func joinBot(_ f: inout MachineFixture, _ outcome: JoinOutcome) -> [PortalStateMachine.Action] {
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        return f.act(.botJoinedMUC(f.botJoin, outcome))
    }

    func levels(_ actions: [PortalStateMachine.Action]) -> [Logger.Level] {
        actions.compactMap {
            switch $0 {
            case .log(let entry), .roles(.log(let entry)): entry.level
            default: nil
            }
        }
    }

    @Test func aBotWithoutOwnershipHasTheDomainHandItOverBeforeAnythingElseThenActivationGoesOn() {
        var f = MachineFixture()
        #expect(Plan.handOver == Plan(changes: [Change(of: .bot, to: .owner, askedBy: .domain), removal], probing: true))
        #expect(joinBot(&f, .joined(nick: "Matrix", created: false, affiliation: MUCAffiliation.none)) == [.roles(.changeAffiliations(.handOver))])
        let actions = f.machine.receive(.roles(.affiliationsChanged(.handOver, nil)), now: f.t0)
        #expect(actions.last == .catchUp(.readRoomFeatures))
        #expect(levels(actions) == [.notice], "a handover is told at notice")
        #expect(f.machine.roles.ownershipSettled)
    }

    @Test func anOwnerBotReadsTheListsFirst() {
        var f = MachineFixture()
        #expect(joinBot(&f, .joined(nick: "Matrix", created: false, affiliation: .owner)) == [.roles(.readOwnership)])
        #expect(f.act(.roles(.ownershipRead(Lists(botOwner: true, domainOwner: true, domainAdmin: false)))) == [.roles(.changeAffiliations(Plan(changes: [removal])))])
        #expect(f.act(.roles(.affiliationsChanged(Plan(changes: [removal]), nil))) == [.catchUp(.readRoomFeatures)])
        #expect(f.machine.roles.ownershipSettled)

        var clean = MachineFixture()
        _ = joinBot(&clean, .joined(nick: "Matrix", created: false, affiliation: .owner))
        #expect(clean.act(.roles(.ownershipRead(Lists(botOwner: true, domainOwner: false, domainAdmin: false)))) == [.catchUp(.readRoomFeatures)])
        #expect(clean.machine.roles.ownershipSettled)
    }

    @Test func aRefusedProbeMeansTheDomainOwnsNothingThereAndIsQuiet() {
        var f = MachineFixture()
        _ = joinBot(&f, .joined(nick: "Matrix", created: false, affiliation: .member))
        let refused = RolesMachine.OwnershipFailure(step: 0, failure: .refused(StanzaErrorInfo(condition: .forbidden)))
        let actions = f.machine.receive(.roles(.affiliationsChanged(.handOver, refused)), now: f.t0)
        #expect(actions.last == .catchUp(.readRoomFeatures))
        #expect(levels(actions) == [.debug])
        #expect(f.machine.roles.ownershipSettled)
    }

    @Test func itIsAskedOncePerPortalButAgainAfterAFailure() {
        var f = MachineFixture()
        _ = joinBot(&f, .joined(nick: "Matrix", created: false, affiliation: MUCAffiliation.none))
        let timedOut = RolesMachine.OwnershipFailure(step: 0, failure: .timeout)
        #expect(f.act(.roles(.affiliationsChanged(.handOver, timedOut))) == [.catchUp(.readRoomFeatures)])
        #expect(!f.machine.roles.ownershipSettled)
        _ = f.act(.xmppDisconnected)
        #expect(joinBot(&f, .joined(nick: "Matrix", created: false, affiliation: MUCAffiliation.none)) == [.roles(.changeAffiliations(.handOver))],
                "asked again at the next activation")
        // The grant went through but the removal was refused: a warning, and asked again next time.
        let refusedRemoval = RolesMachine.OwnershipFailure(step: 1, failure: .refused(StanzaErrorInfo(condition: .notAllowed)))
        #expect(levels(f.machine.receive(.roles(.affiliationsChanged(.handOver, refusedRemoval)), now: f.t0)) == [.warning])
        _ = f.act(.xmppDisconnected)
        #expect(joinBot(&f, .joined(nick: "Matrix", created: false, affiliation: .owner)) == [.roles(.readOwnership)])
        #expect(f.act(.roles(.ownershipRead(nil))) == [.catchUp(.readRoomFeatures)])
        _ = f.act(.xmppDisconnected)
        #expect(joinBot(&f, .joined(nick: "Matrix", created: false, affiliation: .owner)) == [.roles(.readOwnership)])
        _ = f.act(.roles(.ownershipRead(Lists(botOwner: true, domainOwner: false, domainAdmin: false))))
        _ = f.act(.xmppDisconnected)
        #expect(joinBot(&f, .joined(nick: "Matrix", created: false, affiliation: .owner)) == [.catchUp(.readRoomFeatures)], "settled: not asked again")
    }

    @Test func aRoomTheJoinCreatedOrAJoinWithoutAnAffiliationNeedsNothing() {
        var created = MachineFixture()
        #expect(joinBot(&created, .joined(nick: "Matrix", created: true, affiliation: .owner)) == [.catchUp(.readRoomFeatures)])
        #expect(created.machine.roles.ownershipSettled)
        var unsaid = MachineFixture()
        #expect(joinBot(&unsaid, .joined(nick: "Matrix", created: false)) == [.catchUp(.readRoomFeatures)])
        #expect(!unsaid.machine.roles.ownershipSettled)
    }
}
