import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing
import TestSupport

/// Rich messages through a whole portal with a real (in-memory) store and scripted fakes of both sides: the store
/// lookups (`lookUpBridged`, `resolveMatrixTargets`) find what each reference names, and what was bridged is
/// remembered for the next reference (reaction sets diffed, corrections and retractions only by their author).
@Suite struct RichMessagesPortalTests {
    let room = RoomID("!room:localhost")!
    let muc = JID("lounge@conference.localhost")!
    let alice = UserID("@alice:localhost")!

    func harness() async throws -> BridgeHarness {
        let harness = try BridgeHarness()
        try await PortalTests().linked(harness, members: [alice: "Alice"])
        return harness
    }

    /// A message from an XMPP occupant (occupant-id `occ-<nick>`), fed to the bridge; returns it.
    @discardableResult
    func occupant(_ harness: BridgeHarness, _ nick: String, _ body: String?, stanzaID: String, id: String? = nil,
                  originID: String? = nil, references: MessageReferences = MessageReferences()) -> RoomMessage {
        var message = RoomMessage(room: muc, nick: nick, to: FakeXMPPLink.bot, stanzaID: StanzaID(stanzaID), originID: originID.flatMap(OriginID.init),
                                  id: id.flatMap(StanzaAttributeID.init), occupantID: OccupantID("occ-\(nick)"), body: body)
        message.references = references
        harness.xmpp.feed.yield(.message(message))
        return message
    }

    /// The Matrix event a bridged XMPP message became.
    func bridged(_ harness: BridgeHarness, _ stanzaID: String) async throws -> EventID {
        try await eventuallyValue("\(stanzaID) bridged") {
            try await harness.store.mapping(room: room, stanzaID: StanzaID(stanzaID)!)?.eventID
        }
    }

    @Test func anXMPPReactionSetIsDiffedAgainstWhatWasBridgedBefore() async throws {
        let harness = try await harness()
        occupant(harness, "romeo", "hi", stanzaID: "x1")
        let target = try await bridged(harness, "x1")
        let ghost = try #require(harness.matrix.state.withLock { $0.sent.first?.user })
        occupant(harness, "romeo", nil, stanzaID: "x2", references: MessageReferences(reactions: .init(id: "x1", keys: ["👍", "🐢"])))
        try await eventually("two reactions") { harness.matrix.state.withLock { $0.reactions.count } == 2 }
        let reactions = harness.matrix.state.withLock { $0.reactions }
        #expect(reactions.map(\.key) == ["👍", "🐢"])
        #expect(reactions.allSatisfy { $0.target == target && $0.user == ghost })
        let reactor = MessageSender.occupant(.occupantID(OccupantID("occ-romeo")!))
        try await eventually("reactions stored") {
            try await harness.store.reactions(room: room, target: target, reactor: reactor).map(\.eventID) == reactions.map(\.eventID)
        }

        // The next set drops 👍: its event is redacted by the same ghost, nothing is added.
        let next = occupant(harness, "romeo", nil, stanzaID: "x3", references: MessageReferences(reactions: .init(id: "x1", keys: ["🐢"])))
        try await eventually("one redaction") { harness.matrix.state.withLock { $0.redactions.count } == 1 }
        #expect(harness.matrix.state.withLock { $0.redactions } == [.init(room: room, user: ghost, event: reactions[0].eventID, reason: nil)])
        try await eventually("reactions updated") {
            try await harness.store.reactions(room: room, target: target, reactor: reactor).map(\.key) == ["🐢"]
        }
        // The same set again (a duplicate copy), then a message as the barrier: nothing else reached Matrix.
        harness.xmpp.feed.yield(.message(next))
        occupant(harness, "romeo", "done", stanzaID: "x4")
        _ = try await bridged(harness, "x4")
        #expect(harness.matrix.state.withLock { $0.reactions.count } == 2)
        #expect(harness.matrix.state.withLock { $0.redactions.count } == 1)
        await harness.stop()
    }

    @Test func correctionsAndRetractionsActOnlyForTheirAuthor() async throws {
        let harness = try await harness()
        occupant(harness, "romeo", "teh", stanzaID: "x1", id: "m1", originID: "o1")
        let original = try await bridged(harness, "x1")
        let romeosGhost = try #require(harness.matrix.state.withLock { $0.sent.first?.user })

        // juliet names romeo's id: the id is looked up among juliet's messages only, so it is a message of her own.
        occupant(harness, "juliet", "hijack", stanzaID: "x2", id: "j1", references: MessageReferences(replaces: "m1"))
        _ = try await bridged(harness, "x2")
        let hijack = try #require(harness.matrix.state.withLock { $0.sent.last })
        #expect(hijack.message == OutgoingMatrixMessage(kind: .text, body: "hijack"))
        #expect(hijack.user != romeosGhost)

        // romeo's own correction edits his message.
        occupant(harness, "romeo", "the", stanzaID: "x3", id: "m2", references: MessageReferences(replaces: "m1"))
        _ = try await bridged(harness, "x3")
        let edit = try #require(harness.matrix.state.withLock { $0.sent.last })
        #expect(edit.user == romeosGhost)
        #expect(edit.message == OutgoingMatrixMessage(kind: .text, body: "* the", relatesTo: .replacing(original),
                                                      replacement: .init(body: "the", html: nil, mentions: [])))
        // A correction naming the correction (a buggy client) still edits the original.
        occupant(harness, "romeo", "the!", stanzaID: "x4", id: "m3", references: MessageReferences(replaces: "m2"))
        _ = try await bridged(harness, "x4")
        #expect(harness.matrix.state.withLock { $0.sent.last?.message.relatesTo } == .replacing(original))

        // juliet retracts romeo's message (both forms): refused and recorded; romeo's legacy retraction redacts it.
        occupant(harness, "juliet", nil, stanzaID: "x5", references: MessageReferences(retractions: [.current(id: "x1")]))
        occupant(harness, "juliet", nil, stanzaID: "x6", references: MessageReferences(retractions: [.legacy(originID: "o1")]))
        occupant(harness, "romeo", nil, stanzaID: "x7", references: MessageReferences(retractions: [.legacy(originID: "o1")]))
        try await eventually("redacted") { harness.matrix.state.withLock { $0.redactions.count } >= 1 }
        #expect(harness.matrix.state.withLock { $0.redactions } == [.init(room: room, user: romeosGhost, event: original, reason: nil)])
        for refused in ["x5", "x6"] {
            try await eventually("\(refused) recorded as refused") {
                try await harness.store.mapping(room: room, stanzaID: StanzaID(refused)!)?.state == .failed
            }
        }
        try await eventually("retraction recorded") {
            try await harness.store.mapping(room: room, stanzaID: StanzaID("x7")!)?.kind == .retraction
        }
        await harness.stop()
    }

    @Test func matrixReactionsRepliesAndRedactionsNameTheRoomsIDs() async throws {
        let harness = try await harness()
        occupant(harness, "romeo", "hello there", stanzaID: "x1")
        let target = try await bridged(harness, "x1")
        func event(_ id: String, _ content: MatrixRoomEvent.Content) -> MatrixRoomEvent {
            MatrixRoomEvent(eventID: EventID(id)!, room: room, sender: alice, content: content)
        }
        func sent(_ count: Int) async throws -> FakeXMPPLink.Sent {
            try await eventually("\(count) sent to XMPP") { harness.xmpp.state.withLock { $0.sent.count } >= count }
            return try #require(harness.xmpp.state.withLock { $0.sent.count == count ? $0.sent.last : nil })
        }

        try await harness.bridge.acceptMatrixEvents([event("$m1", .reaction(target: target, key: "👍"))])
        #expect(try await sent(1).references == MessageReferences(reactions: .init(id: "x1", keys: ["👍"]), store: true))
        try await harness.bridge.acceptMatrixEvents([event("$m2", .reaction(target: target, key: "🎉"))])
        #expect(try await sent(2).references == MessageReferences(reactions: .init(id: "x1", keys: ["👍", "🎉"]), store: true))
        try await harness.bridge.acceptMatrixEvents([event("$m3", .redaction(target: EventID("$m1")!, reason: nil))])
        #expect(try await sent(3).references == MessageReferences(reactions: .init(id: "x1", keys: ["🎉"]), store: true))

        try await harness.bridge.acceptMatrixEvents([event("$m4", .message(msgtype: .text, body: "yes",
                                                                           details: MessageDetails(replyTo: target)))])
        let reply = try await sent(4)
        let quote = "> romeo:\n> hello there\n"
        #expect(reply.body == quote + "yes")
        #expect(reply.references == MessageReferences(reply: .init(to: muc.with(resource: "romeo"), id: "x1"),
                                                      fallbacks: [.init(feature: "urn:xmpp:reply:0", ranges: [0..<quote.unicodeScalars.count])]))

        // The reply is reflected with a stanza-id; its redaction retracts it by that id and by its origin-id.
        let reflected = try await eventuallyValue("reply receipted") {
            try await harness.store.mapping(room: room, eventID: EventID("$m4")!).flatMap { $0.state == .delivered ? $0 : nil }
        }
        try await harness.bridge.acceptMatrixEvents([event("$m5", .redaction(target: EventID("$m4")!, reason: nil))])
        let retraction = try await sent(5)
        #expect(retraction.references.retractions == [.current(id: try #require(reflected.stanzaID).rawValue),
                                                      .legacy(originID: reply.originID.rawValue)])
        #expect(retraction.references.store)
        #expect(retraction.from == reply.from)
        await harness.stop()
    }
}
