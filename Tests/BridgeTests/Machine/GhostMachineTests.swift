@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing

/// The ghost sub-machine alone: occupants come, rename and go with their ghosts, a rejoin's occupant list reconciles
/// the stored ghosts, and what the delivery learns is taken in. (Through the portal machine:
/// `PortalXMPPInboundMachineTests`.)
@Suite struct GhostMachineTests {
    typealias Output = GhostMachine.Output

    let room = RoomID("!room:localhost")!
    let muc = JID("lounge@conference.localhost")!
    var machine: GhostMachine

    init() {
        machine = GhostMachine(configuration: .init(room: room, muc: muc, ghostUserID: { identity in
            UserID("@_xmpp_\(identity.unicodeScalars.filter { ("a"..."z").contains(Character($0)) }.map(String.init).joined()):localhost")
        }))
    }

    func ghost(_ nick: String) -> UserID {
        machine.configuration.ghostUserID(GhostMachine.identity(muc: muc, nick: nick, occupantID: nil, realJID: nil))!
    }

    func presence(_ nick: String, available: Bool = true, codes: Set<MUCStatusCode> = [], newNick: String? = nil,
                  affiliation: MUCAffiliation? = nil, role: MUCRole? = nil) -> RoomPresence {
        var presence = RoomPresence(room: muc, nick: nick, available: available, statusCodes: codes, newNick: newNick)
        presence.affiliation = affiliation
        presence.role = role
        return presence
    }

    func saved(_ nick: String, joined: Bool = true) -> RoomGhost {
        RoomGhost(room: room, user: ghost(nick), nick: nick, occupantID: nil, realJID: nil, joined: joined)
    }

    func setup(_ nick: String, join: Bool = true) -> GhostMachine.GhostSetup {
        .init(ghost: ghost(nick), identity: GhostMachine.identity(muc: muc, nick: nick, occupantID: nil, realJID: nil), nick: nick,
              join: join, saved: saved(nick))
    }

    /// The outputs without log lines.
    mutating func act(_ input: GhostMachine.Input) -> [Output] {
        machine.receive(input).filter { if case .perform(.log) = $0 { false } else { true } }
    }

    @Test mutating func anOccupantGetsAGhostSetUpOnceAndItsPositionRecorded() {
        let juliet = presence("Juliet", affiliation: .admin, role: .moderator)
        #expect(act(.occupantPresent(juliet)) == [.portal(.occupantPresent(juliet, ghost: ghost("Juliet"), setup: setup("Juliet"))),
                                                  .perform(.prepare(setup("Juliet")))])
        #expect(machine.occupants["Juliet"]?.affiliation == .admin)
        #expect(act(.prepared(setup("Juliet"), error: nil)) == [.portal(.ghostSetUp(ghost("Juliet"), failed: false))])
        #expect(machine.ghosts[ghost("Juliet")] == saved("Juliet"))
        // Set up and joined under this nick: a second presence needs nothing more.
        #expect(act(.occupantPresent(juliet)) == [.portal(.occupantPresent(juliet, ghost: ghost("Juliet"), setup: nil))])
    }

    @Test mutating func aFailedSetupIsReportedAndLeavesTheGhostUnsaved() {
        _ = act(.occupantPresent(presence("Juliet")))
        #expect(act(.prepared(setup("Juliet"), error: .unavailable("down"))) == [.portal(.ghostSetUp(ghost("Juliet"), failed: true))])
        #expect(machine.ghosts[ghost("Juliet")] == nil)
    }

    /// A sender the room already placed keeps its affiliation and role when the delivery records it again (before,
    /// the delivery's record dropped them, and the next occupant-list change demoted its ghost on Matrix).
    @Test mutating func theDeliverysRecordOfAKnownSenderKeepsItsPosition() throws {
        _ = act(.occupantPresent(presence("Juliet", affiliation: .owner, role: .moderator)))
        let plan = try #require(machine.plan(nick: "Juliet", occupantID: nil, realJID: nil, joinedNow: true))
        let occupant = try #require(plan.occupant)
        #expect(occupant.affiliation == .owner)
        #expect(occupant.role == .moderator)
        #expect(act(.occupantSeen(occupant)) == [])
        #expect(machine.occupants["Juliet"]?.affiliation == .owner)
    }

    @Test mutating func aNickChangeRenamesTheSameGhost() {
        _ = act(.occupantPresent(presence("Juliet")))
        _ = act(.prepared(setup("Juliet"), error: nil))
        let renamed = RoomGhost(room: room, user: ghost("Juliet"), nick: "Jules", occupantID: nil, realJID: nil, joined: true)
        #expect(act(.occupantRenamed(from: "Juliet", to: "Jules")) == [.perform(.rename(renamed))])
        #expect(machine.occupants["Jules"]?.ghost == ghost("Juliet"))
        #expect(machine.occupants["Juliet"] == nil)
    }

    @Test mutating func aKickOrBanRemovesTheGhostWithTheReasonAndALeaveLeaves() {
        _ = act(.occupantPresent(presence("Juliet")))
        _ = act(.prepared(setup("Juliet"), error: nil))
        var kicked = presence("Juliet", available: false, codes: [.kicked])
        kicked.reason = "spam"
        #expect(act(.occupantLeft(kicked)) == [
            .portal(.ghostLeft(ghost("Juliet"))),
            .perform(.remove(ghost("Juliet"), .kick(ban: false, reason: "Kicked in the XMPP room: spam"), saving: saved("Juliet", joined: false))),
            .portal(.occupantGone),
        ])
        // Not known and never saved: the ghost still leaves (its id comes from the nick), with nothing to save.
        #expect(act(.occupantLeft(presence("Romeo", available: false))) == [
            .portal(.ghostLeft(ghost("Romeo"))), .perform(.remove(ghost("Romeo"), .leave, saving: nil)), .portal(.occupantGone),
        ])
    }

    @Test mutating func aCompleteOccupantListTakesOutTheGhostsOfThoseWhoLeftWhileAway() {
        #expect(act(.loaded([saved("Juliet"), saved("Romeo"), saved("Tybalt", joined: false)])) == [])
        #expect(act(.occupantListCleared) == [])
        _ = act(.occupantPresent(presence("Juliet")))
        #expect(act(.activated) == [.perform(.queueReconciliation)])
        #expect(act(.reconcile) == [
            .portal(.ghostLeft(ghost("Romeo"))), .perform(.remove(ghost("Romeo"), .leave, saving: saved("Romeo", joined: false))),
            .portal(.occupantListComplete),
        ])
    }

    @Test mutating func anUnlinkReadsTheStoredGhostsOnlyWhenTheyWereNeverLoaded() {
        #expect(act(.unlinkRequested(connected: true)) == [.perform(.readForUnlink(connected: true))])
        #expect(act(.readForUnlink([saved("Romeo")], connected: true)) == [.portal(.readyToUnlink(connected: true))])
        #expect(machine.ghosts[ghost("Romeo")]?.joined == true)
        var loaded = GhostMachineTests()
        _ = loaded.act(.loaded([]))
        #expect(loaded.act(.unlinkRequested(connected: false)) == [.portal(.readyToUnlink(connected: false))])
    }

    @Test mutating func whatTheDeliveryLearntIsTakenIn() {
        #expect(act(.ghostSaved(saved("Juliet"))) == [])
        #expect(act(.ghostOut(ghost("Juliet"))) == [])
        #expect(machine.ghosts[ghost("Juliet")]?.joined == false)
        // The ghost is out: a presence sets it up again, joining.
        let juliet = presence("Juliet")
        let rejoin = GhostMachine.GhostSetup(ghost: ghost("Juliet"), identity: setup("Juliet").identity, nick: "Juliet", join: true,
                                             saved: saved("Juliet"))
        #expect(act(.occupantPresent(juliet)) == [.portal(.occupantPresent(juliet, ghost: ghost("Juliet"), setup: rejoin)),
                                                  .perform(.prepare(rejoin))])
    }
}
