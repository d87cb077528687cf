@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing

/// A Matrix user's displayname change renames their occupant: the MUC's 303 for the old nick is ours, never a ghost.
@Suite struct PuppetRenameMachineTests {
    @Test func aPuppetsNickChangeMakesNoGhost() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "alice"])
        let puppet = try #require(f.machine.puppets[f.alice])
        let rename = f.member(1, f.alice, .join, name: "Alice Liddell")
        let change = f.puppetJoin(f.alice, "Alice Liddell", change: true, then: .membership(eventID: rename.event.eventID, seq: 1))
        #expect(f.act(.matrixEvents([rename])) == [.puppets(.join(change))])
        // The nick change is confirmed (the join outcome comes first), then the room's presences for it arrive.
        #expect(f.act(.puppets(.joinAnswered(change, .joined(nick: "Alice Liddell", created: false))))
                == [.puppets(.save(f.puppet(f.alice, "Alice Liddell"))), .dequeue(seq: 1)])
        let ghostsBefore = f.machine.ghosts
        #expect(f.act(.xmppPresence(f.presence(puppet.nick, available: false, codes: [.nickChanged], newNick: "Alice Liddell"))) == [])
        #expect(f.act(.xmppPresence(f.presence("Alice Liddell"))) == [])
        #expect(f.machine.ghosts == ghostsBefore)
        #expect(f.machine.occupants["Alice Liddell"] == nil)
    }
}
