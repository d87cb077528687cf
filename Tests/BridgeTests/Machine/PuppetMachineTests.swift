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

    let room = RoomID("!room:localhost")!
    let muc = JID("lounge@conference.localhost")!
    let naming = BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!
    let bot = UserID("@isthmus:localhost")!
    let alice = UserID("@alice:localhost")!
    let bob = UserID("@bob:localhost")!
    var machine: PuppetMachine

    init() {
        let bot = bot
        machine = PuppetMachine(configuration: .init(room: room, naming: naming, isBridged: { $0 != bot && !$0.localpart.hasPrefix("_xmpp_") }))
    }

    func join(_ user: UserID, _ name: String, attempt: Int = 0, first: Int = 0, change: Bool = false, then: FollowUp = .sync) -> PuppetMachine.Join {
        .init(nick: naming.nick(for: name, attempt: attempt), change: change,
              job: .init(user: user, displayname: name, occupant: naming.puppetJID(for: user)!, firstAttempt: first, attempt: attempt, then: then))
    }

    func puppet(_ user: UserID, _ nick: String, displayname: String? = nil, joined: Bool = true) -> Puppet {
        Puppet(room: room, user: user, occupant: naming.puppetJID(for: user)!, nick: nick, displayname: displayname ?? nick, joined: joined)
    }

    func joined(_ nick: String) -> JoinOutcome {
        .joined(.joined(room: muc, nick: nick, created: false, affiliation: nil))
    }

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
        #expect(act(.memberJoined(alice, displayname: "Alice", then: membership)) == [.perform(.join(join(alice, "Alice", then: membership)))])
        #expect(act(.joinAnswered(join(alice, "Alice", then: membership), joined("Alice")))
                == [.portal(.joined(alice)), .perform(.save(puppet(alice, "Alice"))), .portal(.ready(puppet(alice, "Alice"), membership))])
        // Joined under that name: ready at once, no second join.
        #expect(act(.ensure(alice, then: .sync)) == [.portal(.ready(puppet(alice, "Alice"), .sync))])
    }

    @Test mutating func aTakenNickTriesTenAlternativesThenFails() {
        #expect(act(.memberJoined(bob, displayname: "Alice", then: .sync)) == [.perform(.join(join(bob, "Alice")))])
        #expect(act(.joinAnswered(join(bob, "Alice"), .nickConflict)) == [.perform(.join(join(bob, "Alice", attempt: 1)))])
        for attempt in 1..<9 {
            #expect(act(.joinAnswered(join(bob, "Alice", attempt: attempt), .nickConflict)) == [.perform(.join(join(bob, "Alice", attempt: attempt + 1)))])
        }
        #expect(act(.joinAnswered(join(bob, "Alice", attempt: 9), .nickConflict))
                == [.portal(.failed(bob, name: "Alice", .sync, .other("every nick tried for \(bob) is taken")))])
        #expect(machine.puppets[bob] == nil)
    }

    @Test mutating func aStoredAlternativeIsKeptAfterARestartWhileTheDisplaynameIsUnchanged() {
        _ = act(.loaded([puppet(bob, "Alice (Matrix)", displayname: "Alice")]))
        #expect(machine.puppets[bob]?.joined == false)
        #expect(machine.displaynames[bob] == "Alice")
        #expect(act(.ensure(bob, then: .sync)) == [.perform(.join(join(bob, "Alice", attempt: 1, first: 1)))])
    }

    @Test mutating func aDisplaynameChangeIsANickChange() {
        joinedAs(alice, "Alice")
        #expect(act(.memberJoined(alice, displayname: "Alicia", then: .sync)) == [.perform(.join(join(alice, "Alicia", change: true)))])
        #expect(act(.joinAnswered(join(alice, "Alicia", change: true), joined("Alicia")))
                == [.portal(.joined(alice)), .perform(.save(puppet(alice, "Alicia"))), .portal(.ready(puppet(alice, "Alicia"), .sync))])
    }

    @Test mutating func noJoinIsTriedWhileTheXMPPSideIsDown() {
        #expect(act(.memberJoined(alice, displayname: "Alice", then: .sync), connected: false)
                == [.portal(.failed(alice, name: "Alice", .sync, .notConnected))])
        #expect(act(.joinFailed(join(alice, "Alice"), .timeout)) == [.portal(.failed(alice, name: "Alice", .sync, .timeout))])
    }

    @Test mutating func aKickOnMatrixTakesTheOccupantOutSayingWhoAndWhy() {
        joinedAs(alice, "Alice")
        joinedAs(bob, "Bob")
        #expect(act(.memberLeft(alice, banned: true, by: bob, reason: "spam"))
                == [.portal(.removed(alice)), .perform(.leave(nick: "Alice", occupant: naming.puppetJID(for: alice)!, status: "Banned on Matrix by Bob: spam")),
                    .perform(.delete(alice))])
        #expect(machine.displaynames[alice] == nil)
        // While the XMPP side is down the occupant is forgotten without a leave; a non-member is nothing to remove.
        #expect(act(.memberLeft(bob, banned: false, by: bob, reason: nil), connected: false) == [.portal(.removed(bob)), .perform(.delete(bob))])
        #expect(act(.memberLeft(bob, banned: false, by: bob, reason: nil)) == [])
    }

    @Test mutating func aSyncReadsTheMembersAndTheDepartedLeave() {
        joinedAs(alice, "Alice")
        #expect(act(.sync) == [.perform(.fetchMembers)])
        let members: JoinedMembers = [bob: "Bob", bot: nil, UserID("@_xmpp_juliet:localhost")!: "Juliet"]
        #expect(act(.membersFetched(members)) == [.portal(.membersRead(members, bridged: [bob]))])
        #expect(machine.displaynames[bob] == "Bob")
        #expect(act(.membersFetched(nil)) == [])
        #expect(act(.removeDeparted(members: Set(members.displayNames.keys)))
                == [.portal(.removed(alice)), .perform(.leave(nick: "Alice", occupant: naming.puppetJID(for: alice)!, status: nil)), .perform(.delete(alice))])
    }

    @Test mutating func anOccupantTheRoomRemovedIsNoLongerJoinedAndRejoinsWhenNeeded() {
        joinedAs(alice, "Alice")
        joinedAs(bob, "Bob")
        // A nick change's unavailable presence is not a removal.
        _ = act(.occupantLeft(RoomPresence(room: muc, nick: "Alice", available: false, statusCodes: [.nickChanged], newNick: "Alicia")))
        #expect(machine.puppets[alice]?.joined == true)
        _ = act(.occupantLeft(RoomPresence(room: muc, nick: "Alice", available: false, statusCodes: [.kicked])))
        #expect(machine.puppets[alice]?.joined == false)
        #expect(act(.ensure(alice, then: .sync)) == [.perform(.join(join(alice, "Alice")))])
        _ = act(.occupantOut(bob))
        #expect(machine.puppets[bob]?.joined == false)
        joinedAs(alice, "Alice")
        _ = act(.xmppGone)
        #expect(machine.puppets.values.allSatisfy { !$0.joined })
    }
}
