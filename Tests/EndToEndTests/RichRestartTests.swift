import Foundation
import IsthmusCommon
import Matrix
import TestSupport
import XCTest
import XMLStream
import XMPP

/// Issue 12 §8: an edit, a reaction and a retraction made on each side while the bridge is down arrive exactly once
/// after it starts (MAM catch-up on XMPP, the homeserver's transaction queue on Matrix).
final class RichRestartTests: XCTestCase {
    func testCorrectionsReactionsAndRetractionsWhileTheBridgeIsDownArriveOnceAfterRestart() async throws {
        let pair = try await RichPair.start("richrestart")
        defer { pair.close() }
        let (alice, romeo, muc, room) = (pair.alice, pair.romeo, pair.muc, pair.room)
        let xmppFix = try await pair.xmppSays("xmpp fix me")
        let xmppReactTarget = try await pair.xmppSays("xmpp react to me")
        let xmppRetract = try await pair.xmppSays("xmpp retract me")
        let matrixFix = try await pair.aliceSays("matrix fix me")
        let matrixReactTarget = try await pair.aliceSays("matrix react to me")
        let matrixRedact = try await pair.aliceSays("matrix redact me")
        let ghost = xmppFix.event.sender

        pair.world.stopBridge()
        // XMPP, while the bridge is down: Romeo corrects, reacts to alice's message, retracts.
        try romeo.sendGroupchat(to: muc, body: "xmpp fixed", extensions: [RichWire.replaceElement(id: try XCTUnwrap(xmppFix.reflected.id?.rawValue))])
        try romeo.sendGroupchat(to: muc, body: nil, extensions: RichWire.reactionElements(id: try pair.stanzaID(of: matrixReactTarget.seen), ["👍"]))
        try romeo.sendGroupchat(to: muc, body: RichWire.retractionFallbackBody,
                                extensions: RichWire.retractElements(stanzaID: try pair.stanzaID(of: xmppRetract.reflected)))
        // ... and says something new and corrects it: the correction resolves against a message caught up with it.
        let born = try romeo.sendGroupchat(to: muc, body: "xmpp born while down")
        try romeo.sendGroupchat(to: muc, body: "xmpp born while down, fixed", extensions: [RichWire.replaceElement(id: try XCTUnwrap(born.id?.rawValue))])
        // Matrix, meanwhile: alice edits, reacts to Romeo's message, redacts, and says something new and edits it.
        try await alice.edit(matrixFix.eventID, to: "matrix fixed", in: room)
        try await alice.react("🎉", to: xmppReactTarget.event.eventID, in: room)
        try await alice.redact(matrixRedact.eventID, in: room)
        let matrixBorn = try await alice.send("matrix born while down", to: room)
        try await alice.edit(matrixBorn, to: "matrix born while down, fixed", in: room)
        try await pair.world.startBridge()

        // XMPP → Matrix: each once, from Romeo's ghost. The sentinel comes after all three in the room's archive.
        let timeline = try await pair.timeline(untilXMPPSentinel: "xmpp sentinel after restart", timeout: 60)
        let edits = timeline.filter { $0.relationType == "m.replace" && $0.relatedEventID == xmppFix.event.eventID }
        XCTAssertEqual(edits.map { $0.raw.at("content", "m.new_content", "body")?.stringValue }, ["xmpp fixed"], "the correction, once")
        XCTAssertEqual(edits.map(\.sender), [ghost])
        let reactions = timeline.filter { $0.type == "m.reaction" && $0.sender != alice.userID }
        XCTAssertEqual(reactions.map(\.reactionKey), ["👍"], "the reaction, once")
        XCTAssertEqual(reactions.map(\.relatedEventID), [matrixReactTarget.eventID])
        XCTAssertEqual(reactions.map(\.sender), [ghost])
        let redactions = timeline.filter { $0.type == "m.room.redaction" && $0.sender == ghost }
        XCTAssertEqual(redactions.map { $0.raw.at("content", "redacts")?.stringValue ?? $0.raw["redacts"]?.stringValue },
                       [xmppRetract.event.eventID], "the retraction, once")
        let isRetracted = try await alice.isRedacted(xmppRetract.event.eventID, in: room)
        XCTAssertTrue(isRetracted)
        let bodies = pair.ghostMessages(in: timeline).filter { $0.relationType == nil && !$0.isRedacted }
        XCTAssertEqual(bodies.compactMap(\.body), ["xmpp fix me", "xmpp react to me", "xmpp born while down", "xmpp sentinel after restart"],
                       "no stray or doubled message")
        let bornEvent = bodies.first { $0.body == "xmpp born while down" }?.eventID
        let bornEdits = timeline.filter { $0.relationType == "m.replace" && $0.relatedEventID == bornEvent }
        XCTAssertEqual(bornEdits.map { $0.raw.at("content", "m.new_content", "body")?.stringValue }, ["xmpp born while down, fixed"])

        // Matrix → XMPP: each once, from alice's puppet.
        let late = try await pair.puppetMessages(untilSentinel: "matrix sentinel after restart", timeout: 60)
        let corrections = late.filter { $0.extensionElement("replace", namespace: RichWire.correction) != nil }
        XCTAssertEqual(corrections.map(\.body), ["matrix fixed", "matrix born while down, fixed"], "each correction, once")
        let bornSeen = late.first { $0.body == "matrix born while down" }
        XCTAssertEqual(corrections.map { $0.extensionElement("replace", namespace: RichWire.correction)?[attribute: "id"] },
                       [matrixFix.seen.id?.rawValue, bornSeen?.id?.rawValue])
        let reactionSets = late.compactMap { RichWire.reactions(in: $0) }
        XCTAssertEqual(reactionSets.map(\.keys), [["🎉"]], "the reaction, once")
        XCTAssertEqual(reactionSets.map(\.id), [try pair.stanzaID(of: xmppReactTarget.reflected)])
        let retractions = late.filter { $0.extensionElement("retract", namespace: RichWire.retract1) != nil }
        XCTAssertEqual(retractions.map { $0.extensionElement("retract", namespace: RichWire.retract1)?[attribute: "id"] },
                       [try pair.stanzaID(of: matrixRedact.seen)], "the retraction, once")
        let plain = late.filter { message in
            message.extensions.allSatisfy { ![RichWire.correction, RichWire.reactions, RichWire.retract1, RichWire.fasten].contains($0.namespace) }
        }
        XCTAssertEqual(plain.map(\.body), ["matrix born while down", "matrix sentinel after restart"], "no stray or doubled message")
    }
}
