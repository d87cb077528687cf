import Bridge
import Foundation
import IsthmusCommon
import Testing
import TestSupport

/// Deterministic names and ids: the basis of idempotent resends across restarts.
@Suite struct BridgeNamingTests {
    let naming = BridgeNaming(componentDomain: "bridge.example.org", botNick: "Matrix")!

    @Test func puppetJIDsEscapeTheUserIDAndStayStable() {
        #expect(naming.puppetJID(for: UserID("@alice:example.org")!)?.description == "alice\\3aexample.org@bridge.example.org/isthmus")
        #expect(naming.puppetJID(for: UserID("@we/ird:srv:8448")!)?.description == "we\\2fird\\3asrv\\3a8448@bridge.example.org/isthmus")
        #expect(naming.botOccupant.description == "isthmus@bridge.example.org/isthmus")
        #expect(naming.componentJID.description == "bridge.example.org")
        #expect(naming.isOurs(JID("x@bridge.example.org/y")!))
        #expect(!naming.isOurs(JID("x@example.org/y")!))
    }

    /// The bridge's occupant has a localpart (so ejabberd's fallback from a bare JID to its domain gives puppets
    /// nothing of the bot's) that no Matrix user's occupant can have: every puppet localpart holds an escaped `:`.
    @Test func noMatrixUserMapsToTheBotsJID() throws {
        let bot = naming.botOccupant
        #expect(bot.localpart == "isthmus" && bot.localpart?.contains("\\3a") == false)
        var users = ["@isthmus:bridge.example.org", "@isthmus:example.org", "@Isthmus:x", "@isthmus\\3a:x", "@i:sthmus"]
        var random = SeededGenerator(seed: 14)
        let alphabet = Array("abcXYZ019:._=-/@\\#isthmu ")
        for _ in 0..<2000 {
            let local = String((0..<Int.random(in: 0...9, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            users.append("@" + local + ":" + (Bool.random(using: &random) ? "example.org" : "bridge.example.org"))
        }
        var checked = 0
        for text in users {
            guard let user = UserID(text), let puppet = naming.puppetJID(for: user) else { continue }
            checked += 1
            #expect(puppet.bare != bot.bare, "\(text)")
            #expect(puppet.localpart?.contains("\\3a") == true, "\(text)")
        }
        #expect(checked > 1000)
    }

    /// Found by the identifier fuzz harness: JIDs fold case, Matrix ids do not.
    @Test func usersDifferingOnlyInCaseGetDifferentPuppets() throws {
        let lower = try #require(naming.puppetJID(for: UserID("@bob:example.org")!))
        let upper = try #require(naming.puppetJID(for: UserID("@Bob:example.org")!))
        let server = try #require(naming.puppetJID(for: UserID("@bob:Example.org")!))
        #expect(Set([lower, upper, server]).count == 3)
        #expect(lower.description == "bob\\3aexample.org@bridge.example.org/isthmus")
        #expect(upper.localpart?.hasPrefix("bob\\3aexample.org#") == true)
        #expect(upper == naming.puppetJID(for: UserID("@Bob:example.org")!))
    }

    @Test func idsAreDerivedDeterministically() {
        let event = EventID("$abc")!
        #expect(naming.originID(for: event) == naming.originID(for: event))
        #expect(naming.originID(for: event) != naming.originID(for: EventID("$abd")!))
        let room = JID("room@conference.example.org")!
        let stanza = StanzaID("s1")!
        #expect(naming.matrixTxnID(room: room, stanzaID: stanza) == naming.matrixTxnID(room: room, stanzaID: stanza))
        #expect(naming.matrixTxnID(room: room, stanzaID: stanza) != naming.matrixTxnID(room: JID("other@conference.example.org")!, stanzaID: stanza))
    }

    @Test func conflictNicksAreDeterministicAndSanitised() {
        #expect(naming.nick(for: "Alice", attempt: 0) == "Alice")
        #expect(naming.nick(for: "Alice", attempt: 1) == "Alice (Matrix)")
        #expect(naming.nick(for: "Alice", attempt: 2) == "Alice (Matrix 2)")
        #expect(naming.nick(for: "  \u{7}Bob\n ", attempt: 0) == "Bob")
        #expect(naming.nick(for: "   ", attempt: 0) == "matrix-user")
        #expect(naming.nick(for: String(repeating: "x", count: 200), attempt: 0).count == 64)
    }

    /// Client mode: the account is the one JID that is ours, and nothing else on its server is; no puppets.
    @Test func anAccountIsOursAloneAndHasNoPuppets() throws {
        let naming = try #require(BridgeNaming(account: JID("relay@example.org/isthmus")!, botNick: "Matrix"))
        #expect(naming.identity == .account)
        #expect(naming.botOccupant == JID("relay@example.org/isthmus"))
        #expect(naming.isOurs(JID("relay@example.org/other")!))
        #expect(!naming.isOurs(JID("romeo@example.org/phone")!), "another account on the same server is not ours")
        #expect(!naming.isOurs(JID("x@bridge.example.org/y")!))
        #expect(naming.puppetJID(for: UserID("@alice:example.org")!) == nil)
        #expect(BridgeNaming(account: JID("relay@example.org")!, botNick: "Matrix") == nil, "the bound resource is needed")
    }
}
