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
        var renamed = puppet
        renamed.nick = "Alice Liddell"
        f.machine.puppets[f.alice] = renamed   // the nick change was confirmed (the join outcome came first)
        let ghostsBefore = f.machine.ghosts
        #expect(f.act(.xmppPresence(f.presence(puppet.nick, available: false, codes: [.nickChanged], newNick: "Alice Liddell"))) == [])
        #expect(f.act(.xmppPresence(f.presence("Alice Liddell"))) == [])
        #expect(f.machine.ghosts == ghostsBefore)
        #expect(f.machine.occupants["Alice Liddell"] == nil)
    }
}
