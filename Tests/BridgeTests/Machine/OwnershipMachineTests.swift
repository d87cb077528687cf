@testable import Bridge
import Foundation
import IsthmusCommon
import Testing

/// Handing a room's ownership from the component's domain JID (the bridge's occupant in earlier versions) to the
/// bridge's occupant, as literal sequences of the portal machine.
@Suite struct OwnershipMachineTests {
    typealias Handover = PortalStateMachine.OwnershipHandover

    @Test func theBotAsksItselfOnlyWhenTheRoomSaysItIsOwner() {
        #expect(PortalStateMachine.ownershipHandover(botAffiliation: .owner) == Handover(grantor: .bot))
        for affiliation in [MUCAffiliation.admin, .member, .none, .outcast] {
            #expect(PortalStateMachine.ownershipHandover(botAffiliation: affiliation) == Handover(grantor: .domain), "\(affiliation)")
        }
    }

    /// Joins the bot's occupant with `outcome` after the Matrix side is up; returns the actions (logs left out).
    func joinBot(_ f: inout MachineFixture, _ outcome: PortalStateMachine.JoinOutcome) -> [PortalStateMachine.Action] {
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        return f.act(.mucJoined(f.botJoin, outcome))
    }

    @Test func aBotWithoutOwnershipHasTheDomainHandItOverBeforeAnythingElseThenActivationGoesOn() {
        var f = MachineFixture()
        let domain = Handover(grantor: .domain)
        #expect(joinBot(&f, .joined(nick: "Matrix", created: false, affiliation: MUCAffiliation.none)) == [.settleOwnership(domain)])
        let logged = f.machine.receive(.ownershipSettled(domain, .settled), now: f.t0)
        #expect(logged.last == .readRoomFeatures)
        #expect(logged.contains { if case .log(let entry) = $0 { entry.level == .notice } else { false } }, "a handover is told at notice")
        #expect(f.machine.ownershipSettled)
    }

    @Test func anOwnerBotGrantsItselfSoEjabberdsDomainFallbackCannotBeAllItHas() {
        var f = MachineFixture()
        #expect(joinBot(&f, .joined(nick: "Matrix", created: false, affiliation: .owner)) == [.settleOwnership(Handover(grantor: .bot))])
        #expect(f.act(.ownershipSettled(Handover(grantor: .bot), .settled)) == [.readRoomFeatures])
    }

    @Test func aRefusalMeansTheDomainOwnsNothingThereAndIsQuiet() {
        var f = MachineFixture()
        let domain = Handover(grantor: .domain)
        _ = joinBot(&f, .joined(nick: "Matrix", created: false, affiliation: .member))
        let actions = f.machine.receive(.ownershipSettled(domain, .grantRefused(StanzaErrorInfo(condition: .forbidden))), now: f.t0)
        #expect(actions.last == .readRoomFeatures)
        let levels = actions.compactMap { if case .log(let entry) = $0 { entry.level } else { nil } }
        #expect(levels == [.debug])
        #expect(f.machine.ownershipSettled)
    }

    @Test func itIsAskedOncePerPortalButAgainAfterTheXMPPSideDidNotAnswer() {
        var f = MachineFixture()
        let domain = Handover(grantor: .domain)
        _ = joinBot(&f, .joined(nick: "Matrix", created: false, affiliation: MUCAffiliation.none))
        #expect(f.act(.ownershipSettled(domain, .failed(.timeout))) == [.readRoomFeatures])
        #expect(!f.machine.ownershipSettled)
        _ = f.act(.xmppDisconnected)
        #expect(joinBot(&f, .joined(nick: "Matrix", created: false, affiliation: MUCAffiliation.none)) == [.settleOwnership(domain)],
                "asked again at the next activation")
        _ = f.act(.ownershipSettled(domain, .removalRefused(StanzaErrorInfo(condition: .notAllowed))))
        _ = f.act(.xmppDisconnected)
        #expect(joinBot(&f, .joined(nick: "Matrix", created: false, affiliation: MUCAffiliation.none)) == [.readRoomFeatures],
                "settled: not asked again")
    }

    @Test func aRoomTheJoinCreatedOrAJoinWithoutAnAffiliationNeedsNothing() {
        var created = MachineFixture()
        #expect(joinBot(&created, .joined(nick: "Matrix", created: true, affiliation: .owner)) == [.readRoomFeatures])
        #expect(created.machine.ownershipSettled)
        var unsaid = MachineFixture()
        #expect(joinBot(&unsaid, .joined(nick: "Matrix", created: false)) == [.readRoomFeatures])
        #expect(!unsaid.machine.ownershipSettled)
    }
}
