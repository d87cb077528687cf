import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMLStream
import XMPP

/// Corrections, reactions and retractions inside a DM (MUC private messages ↔ a Matrix DM room), both ways, through
/// real servers. A private message has no stanza-id: each side names the other's message by the id it went with.
final class PrivateMessageRichTests: XCTestCase {
    func testEditsReactionsAndRetractionsInADMGoBothWaysOnce() async throws {
        let world = try EndToEndHarness("pm-rich")
        try await world.startBridge()
        defer { world.stopBridge() }
        let scene = try await PrivateMessageTests.Scene(world, muc: "pmrich", account: "bob", nick: "Romeo")
        let (alice, romeo, aliceOccupant, ghost) = (scene.alice, scene.occupant, scene.aliceOccupant, scene.ghost)
        let isPrivate: @Sendable (Message) -> Bool = { $0.type == .chat && $0.from == aliceOccupant }

        // Romeo's private message opens the DM.
        let first = PrivateMessageTests.privateMessage(to: aliceOccupant, body: "helo alice")
        let firstID = try XCTUnwrap(first.id?.rawValue)
        try romeo.send(.message(first))
        let invitation = try await eventuallyValue("alice invited to a DM", timeout: 30) {
            try await alice.invitations().first { $0.inviter == ghost }
        }
        let dm = invitation.room
        try await alice.join(dm)
        let delivered = try await world.matrixMessages(alice, in: dm, count: 1, excluding: alice.userID)
        let original = try XCTUnwrap(delivered.first)

        // XMPP → Matrix, XEP-0308: Romeo's correction becomes an edit of the DM message, from his ghost.
        var fix = PrivateMessageTests.privateMessage(to: aliceOccupant, body: "hello alice")
        fix.extensions.append(RichWire.replaceElement(id: firstID))
        try romeo.send(.message(fix))
        let edit = try await eventuallyValue("Romeo's edit in the DM", timeout: 30) {
            try await alice.timeline(of: dm).first { $0.relationType == "m.replace" }
        }
        XCTAssertEqual(edit.relatedEventID, original.eventID)
        XCTAssertEqual(edit.sender, ghost)
        XCTAssertEqual(edit.raw.at("content", "m.new_content", "body")?.stringValue, "hello alice")

        // Matrix → XMPP: alice's edit is a correction naming the id her private message went with.
        let aliceMessage = try await alice.send("hi romo", to: dm)
        let sent = try await romeo.nextMessage(within: 20, "alice's private message") { isPrivate($0) && $0.body == "hi romo" }
        let sentID = try XCTUnwrap(sent.id?.rawValue)
        try await alice.edit(aliceMessage, to: "hi romeo", in: dm)
        let correction = try await romeo.nextMessage(within: 20, "alice's correction") { isPrivate($0) && $0.body != nil }
        XCTAssertEqual(correction.body, "hi romeo")
        XCTAssertEqual(correction.references.replaces, sentID)

        // XEP-0461: Romeo's reply to alice's message is a Matrix reply to it, without the quote kept for old clients.
        let quote = RichWire.quote(nick: "alice", text: "hi romeo")
        var answer = PrivateMessageTests.privateMessage(to: aliceOccupant, body: quote + "yes?")
        answer.extensions += RichWire.replyExtensions(to: aliceOccupant, id: sentID, quotedPrefix: quote)
        try romeo.send(.message(answer))
        let reply = try await eventuallyValue("Romeo's reply in the DM", timeout: 30) {
            try await alice.messages(in: dm).first { $0.sender == ghost && $0.body == "yes?" }
        }
        XCTAssertEqual(reply.raw.at("content", "m.relates_to", "m.in_reply_to", "event_id")?.stringValue, aliceMessage)

        // alice reacts to Romeo's message, then takes the reaction back: his whole set each time, naming his id.
        let thumbs = try await alice.react("👍", to: original.eventID, in: dm)
        let reacted = try await romeo.nextMessage(within: 20, "alice's reaction") { isPrivate($0) && RichWire.reactions(in: $0) != nil }
        XCTAssertEqual(RichWire.reactions(in: reacted)?.id, firstID)
        XCTAssertEqual(RichWire.reactions(in: reacted)?.keys, ["👍"])
        try await alice.redact(thumbs, in: dm)
        let withdrawn = try await romeo.nextMessage(within: 20, "alice's withdrawn reaction") { isPrivate($0) && RichWire.reactions(in: $0) != nil }
        XCTAssertEqual(RichWire.reactions(in: withdrawn)?.id, firstID)
        XCTAssertEqual(RichWire.reactions(in: withdrawn)?.keys, [])

        // XMPP → Matrix, XEP-0444: Romeo reacts to alice's message (by the id it came with) → an annotation by his ghost.
        try romeo.send(.message(Message(type: .chat, to: aliceOccupant, id: StanzaAttributeID(UUID().uuidString), body: nil,
                                        extensions: [XElement("x", namespace: XMPPNamespace.mucUser)]
                                            + RichWire.reactionElements(id: sentID, ["🎉"]))))
        let party = try await eventuallyValue("Romeo's reaction in the DM", timeout: 30) {
            try await alice.timeline(of: dm).first { $0.type == "m.reaction" && $0.sender == ghost }
        }
        XCTAssertEqual(party.sender, ghost)
        XCTAssertEqual(party.relatedEventID, aliceMessage)
        XCTAssertEqual(party.reactionKey, "🎉")

        // alice's reply to Romeo's message: XEP-0461 naming his id and occupant, the quote for old clients marked as
        // the fallback, and no Matrix id anywhere.
        _ = try await alice.reply("sounds good", to: original.eventID, in: dm)
        let replied = try await romeo.nextMessage(within: 20, "alice's reply") { isPrivate($0) && $0.references.reply != nil }
        XCTAssertEqual(replied.references.reply?.id, firstID)
        XCTAssertEqual(RichWire.body(replied.body ?? "", withoutFallbackOf: RichWire.reply, in: replied), "sounds good")
        XCTAssertTrue(replied.body?.hasPrefix("> Romeo:\n") == true, replied.body ?? "")
        XCTAssertEqual(RichWire.matrixIdentifiers(in: replied.body ?? ""), [])

        // XEP-0424 both ways: alice's redaction retracts her private message; Romeo's retraction redacts his.
        try await alice.redact(aliceMessage, in: dm)
        let retraction = try await romeo.nextMessage(within: 20, "alice's retraction") { isPrivate($0) && $0.references.retraction != nil }
        XCTAssertEqual(retraction.references.retraction?.id, sentID)
        var retract = PrivateMessageTests.privateMessage(to: aliceOccupant, body: RichWire.retractionFallbackBody)
        retract.extensions += RichWire.retractElements(stanzaID: firstID)
        try romeo.send(.message(retract))
        try await eventually("Romeo's first message redacted", timeout: 30) { try await alice.isRedacted(original.eventID, in: dm) }

        // Exactly once, and nothing leaked as text: a sentinel each way comes right after the last of the above.
        try romeo.send(.message(PrivateMessageTests.privateMessage(to: aliceOccupant, body: "sentinel from xmpp")))
        _ = try await world.matrixMessages(alice, in: dm, untilBody: "sentinel from xmpp", excluding: alice.userID)
        let timeline = try await alice.timeline(of: dm).filter { $0.sender == ghost }
        XCTAssertEqual(timeline.filter { $0.relationType == "m.replace" }.count, 1, "the edit arrived twice")
        XCTAssertEqual(timeline.filter { $0.type == "m.reaction" }.count, 1, "the reaction arrived twice")
        XCTAssertEqual(timeline.filter { $0.body?.contains("retracted a previous message") == true }.map(\.eventID), [],
                       "a retraction's fallback body was bridged as a message")
        try await alice.send("sentinel from matrix", to: dm)
        let next = try await romeo.nextMessage(within: 20, "the Matrix sentinel") { isPrivate($0) }
        XCTAssertEqual(next.body, "sentinel from matrix", "something went out twice: \(next)")
        romeo.close()
    }
}
