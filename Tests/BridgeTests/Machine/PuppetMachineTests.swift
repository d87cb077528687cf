@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing

/// The puppet sub-machine alone: a Matrix member's occupant joins under its displayname, negotiates a taken nick,
/// renames, leaves saying why, is brought in line with the member list, and is no longer joined when the MUC says so.
/// (Through the portal machine: `PortalMatrixInboundMachineTests`, `PortalActivationMachineTests`.)
@Suite struct PuppetMachineTests {
    typealias Output = PuppetMachine.Output
    typealias FollowUp = PortalStateMachine.PuppetFollowUp

    /// The portal machine's fixture, for its names and values (its machine is not used here).
    let f = MachineFixture()
    var machine: PuppetMachine

    init() {
        let f = f
        machine = PuppetMachine(configuration: .init(room: f.room, naming: f.naming, isBridged: { $0 != f.bot && !$0.localpart.hasPrefix("_xmpp_") }))
    }

    func join(_ user: UserID, _ name: String, attempt: Int = 0, first: Int = 0, change: Bool = false, then: FollowUp = .sync) -> PuppetMachine.Join {
        f.puppetJoin(user, name, attempt: attempt, first: first, change: change, then: then)
    }

    func joined(_ nick: String) -> JoinOutcome { .joined(nick: nick, created: false) }

    /// The outputs without log lines, connected unless told.
    mutating func act(_ input: PuppetMachine.Input, connected: Bool = true) -> [Output] {
        machine.receive(input, xmppConnected: connected).filter { if case .perform(.log) = $0 { false } else { true } }
    }

    /// `user` joined as `name` (a sync), and the join was answered.
    mutating func joinedAs(_ user: UserID, _ name: String) {
        _ = act(.memberJoined(user, displayname: name, then: .sync))
        _ = act(.joinAnswered(join(user, name), joined(name)))
    }

    @Test mutating func aMemberJoinsUnderItsDisplaynameAndIsReadyOnce() {
        let membership = FollowUp.membership(eventID: EventID("$m1")!, seq: 1)
        #expect(act(.memberJoined(f.alice, displayname: "Alice", then: membership)) == [.perform(.join(join(f.alice, "Alice", then: membership)))])
        #expect(act(.joinAnswered(join(f.alice, "Alice", then: membership), joined("Alice")))
                == [.portal(.joined(f.alice)), .perform(.save(f.puppet(f.alice, "Alice"))), .portal(.ready(f.puppet(f.alice, "Alice"), membership))])
        // Joined under that name: ready at once, no second join.
        #expect(act(.ensure(f.alice, then: .sync)) == [.portal(.ready(f.puppet(f.alice, "Alice"), .sync))])
    }

    @Test mutating func aTakenNickTriesTenAlternativesThenFails() {
        #expect(act(.memberJoined(f.bob, displayname: "Alice", then: .sync)) == [.perform(.join(join(f.bob, "Alice")))])
        #expect(act(.joinAnswered(join(f.bob, "Alice"), .nickConflict)) == [.perform(.join(join(f.bob, "Alice", attempt: 1)))])
        for attempt in 1..<9 {
            #expect(act(.joinAnswered(join(f.bob, "Alice", attempt: attempt), .nickConflict)) == [.perform(.join(join(f.bob, "Alice", attempt: attempt + 1)))])
        }
        #expect(act(.joinAnswered(join(f.bob, "Alice", attempt: 9), .nickConflict))
                == [.portal(.failed(f.bob, name: "Alice", .sync, .other("every nick tried for \(f.bob) is taken")))])
        #expect(machine.puppets[f.bob] == nil)
    }

    @Test mutating func aStoredAlternativeIsKeptAfterARestartWhileTheDisplaynameIsUnchanged() {
        _ = act(.loaded([f.puppet(f.bob, "Alice (Matrix)", displayname: "Alice")]))
        #expect(machine.puppets[f.bob]?.joined == false)
        #expect(machine.displaynames[f.bob] == "Alice")
        #expect(act(.ensure(f.bob, then: .sync)) == [.perform(.join(join(f.bob, "Alice", attempt: 1, first: 1)))])
    }

    @Test mutating func aDisplaynameChangeIsANickChange() {
        joinedAs(f.alice, "Alice")
        #expect(act(.memberJoined(f.alice, displayname: "Alicia", then: .sync)) == [.perform(.join(join(f.alice, "Alicia", change: true)))])
        #expect(act(.joinAnswered(join(f.alice, "Alicia", change: true), joined("Alicia")))
                == [.portal(.joined(f.alice)), .perform(.save(f.puppet(f.alice, "Alicia"))), .portal(.ready(f.puppet(f.alice, "Alicia"), .sync))])
    }

    @Test mutating func noJoinIsTriedWhileTheXMPPSideIsDown() {
        #expect(act(.memberJoined(f.alice, displayname: "Alice", then: .sync), connected: false)
                == [.portal(.failed(f.alice, name: "Alice", .sync, .notConnected))])
        #expect(act(.joinFailed(join(f.alice, "Alice"), .timeout)) == [.portal(.failed(f.alice, name: "Alice", .sync, .timeout))])
    }

    @Test mutating func aKickOnMatrixTakesTheOccupantOutSayingWhoAndWhy() {
        joinedAs(f.alice, "Alice")
        joinedAs(f.bob, "Bob")
        #expect(act(.memberLeft(f.alice, banned: true, by: f.bob, reason: "spam"))
                == [.portal(.removed(f.alice)), .perform(.leave(nick: "Alice", occupant: f.naming.puppetJID(for: f.alice)!, status: "Banned on Matrix by Bob: spam")),
                    .perform(.delete(f.alice))])
        #expect(machine.displaynames[f.alice] == nil)
        // While the XMPP side is down the occupant is forgotten without a leave; a non-member is nothing to remove.
        #expect(act(.memberLeft(f.bob, banned: false, by: f.bob, reason: nil), connected: false) == [.portal(.removed(f.bob)), .perform(.delete(f.bob))])
        #expect(act(.memberLeft(f.bob, banned: false, by: f.bob, reason: nil)) == [])
    }

    @Test mutating func aSyncReadsTheMembersAndTheDepartedLeave() {
        joinedAs(f.alice, "Alice")
        #expect(act(.sync) == [.perform(.fetchMembers)])
        let members: JoinedMembers = [f.bob: "Bob", f.bot: nil, UserID("@_xmpp_juliet:localhost")!: "Juliet"]
        #expect(act(.membersFetched(members)) == [.portal(.membersRead(members, bridged: [f.bob]))])
        #expect(machine.displaynames[f.bob] == "Bob")
        #expect(act(.membersFetched(nil)) == [])
        #expect(act(.removeDeparted(members: Set(members.displayNames.keys)))
                == [.portal(.removed(f.alice)), .perform(.leave(nick: "Alice", occupant: f.naming.puppetJID(for: f.alice)!, status: nil)), .perform(.delete(f.alice))])
    }

    @Test mutating func anOccupantTheRoomRemovedIsNoLongerJoinedAndRejoinsWhenNeeded() {
        joinedAs(f.alice, "Alice")
        joinedAs(f.bob, "Bob")
        // A nick change's unavailable presence is not a removal.
        _ = act(.occupantLeft(RoomPresence(room: f.muc, nick: "Alice", available: false, statusCodes: [.nickChanged], newNick: "Alicia")))
        #expect(machine.puppets[f.alice]?.joined == true)
        _ = act(.occupantLeft(RoomPresence(room: f.muc, nick: "Alice", available: false, statusCodes: [.kicked])))
        #expect(machine.puppets[f.alice]?.joined == false)
        #expect(act(.ensure(f.alice, then: .sync)) == [.perform(.join(join(f.alice, "Alice")))])
        _ = act(.occupantOut(f.bob))
        #expect(machine.puppets[f.bob]?.joined == false)
        joinedAs(f.alice, "Alice")
        _ = act(.xmppGone)
        #expect(machine.puppets.values.allSatisfy { !$0.joined })
    }
}
