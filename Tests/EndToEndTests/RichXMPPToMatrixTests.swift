import Foundation
import IsthmusCommon
import Matrix
import TestSupport
import XCTest
import XMLStream
import XMPP

/// Issue 12, XMPP → Matrix: the Matrix events (read as raw JSON) that XMPP replies, corrections, retractions,
/// moderation, reactions, styling and mentions become. Romeo owns the MUC; Juliet is a second occupant.
final class RichXMPPToMatrixTests: XCTestCase {
    func testRepliesBecomeMatrixRepliesWithoutTheQuotedFallback() async throws {
        let pair = try await RichPair.start("xreply", withJuliet: true)
        defer { pair.close() }
        let juliet = try XCTUnwrap(pair.juliet)

        // Romeo replies to alice's message, referencing the stanza-id he saw; the quote has an astral character, so a
        // range counted in UTF-16 units would cut the wrong text.
        let (aliceEventID, aliceSeen) = try await pair.aliceSays("matrix original 🎉")
        let aliceQuote = RichWire.quote(nick: RichPair.puppetNick, text: "matrix original 🎉")
        let toAlice = try await pair.xmppSays(aliceQuote + "romeo's reply", extensions: RichWire.replyExtensions(
            to: pair.muc.bare.with(resource: RichPair.puppetNick)!, id: try pair.stanzaID(of: aliceSeen), quotedPrefix: aliceQuote
        )) { $0.type == "m.room.message" && $0.body?.contains("romeo's reply") == true }
        XCTAssertEqual(toAlice.event.raw.at("content", "m.relates_to", "m.in_reply_to", "event_id")?.stringValue, aliceEventID,
                       toAlice.event.raw.jsonText)
        XCTAssertEqual(toAlice.event.body, "romeo's reply")

        // Juliet replies to Romeo's message: a reply between two XMPP users.
        let romeos = try await pair.xmppSays("romeo's own words")
        let romeoQuote = RichWire.quote(nick: "Romeo", text: "romeo's own words")
        let toRomeo = try await pair.xmppSays(romeoQuote + "juliet answers", by: juliet, extensions: RichWire.replyExtensions(
            to: pair.muc.bare.with(resource: "Romeo")!, id: try pair.stanzaID(of: romeos.reflected), quotedPrefix: romeoQuote
        )) { $0.type == "m.room.message" && $0.body?.contains("juliet answers") == true }
        XCTAssertEqual(toRomeo.event.raw.at("content", "m.relates_to", "m.in_reply_to", "event_id")?.stringValue, romeos.event.eventID,
                       toRomeo.event.raw.jsonText)
        XCTAssertEqual(toRomeo.event.body, "juliet answers")
        XCTAssertNotEqual(toRomeo.event.sender, romeos.event.sender, "Juliet's ghost, not Romeo's")

        // Each once; no XMPP address in any body.
        let timeline = try await pair.timeline(untilXMPPSentinel: "reply sentinel")
        let bodies = pair.ghostMessages(in: timeline).compactMap(\.body)
        XCTAssertEqual(bodies, ["romeo's reply", "romeo's own words", "juliet answers", "reply sentinel"])
        for body in bodies { XCTAssertFalse(body.contains(pair.world.bed.mucDomain), body) }
    }

    func testCorrectionsFromTheSenderBecomeEditsAndOthersCorrectionsAreRefused() async throws {
        let pair = try await RichPair.start("xcorrect", withJuliet: true)
        defer { pair.close() }
        let juliet = try XCTUnwrap(pair.juliet)
        let original = try await pair.xmppSays("helo wrld")
        let originalID = try XCTUnwrap(original.reflected.id?.rawValue)
        let ghost = original.event.sender

        let fix = try await pair.xmppSays("hello world", extensions: [RichWire.replaceElement(id: originalID)]) {
            $0.relationType == "m.replace" && $0.relatedEventID == original.event.eventID
        }
        XCTAssertEqual(fix.event.sender, ghost, "the edit comes from the same ghost")
        XCTAssertEqual(fix.event.raw.at("content", "m.new_content", "body")?.stringValue, "hello world", fix.event.raw.jsonText)
        XCTAssertEqual(fix.event.body, "* hello world")

        // A second correction again names the original's id (XEP-0308): a second edit of the same event.
        let again = try await pair.xmppSays("hello, world", extensions: [RichWire.replaceElement(id: originalID)]) {
            $0.raw.at("content", "m.new_content", "body")?.stringValue == "hello, world"
        }
        XCTAssertEqual(again.event.relatedEventID, original.event.eventID)
        XCTAssertEqual(again.event.sender, ghost)

        // Juliet reuses Romeo's id: ids are scoped to their sender, so this edits nothing.
        try juliet.sendGroupchat(to: pair.muc, body: "hijacked", extensions: [RichWire.replaceElement(id: originalID)])
        let timeline = try await pair.timeline(untilXMPPSentinel: "correction sentinel", by: juliet)
        let edits = timeline.filter { $0.relationType == "m.replace" && $0.relatedEventID == original.event.eventID }
        XCTAssertEqual(edits.map { $0.raw.at("content", "m.new_content", "body")?.stringValue }, ["hello world", "hello, world"],
                       "exactly Romeo's two corrections, once each")
        XCTAssertEqual(Set(edits.map(\.sender)), [ghost])
    }

    func testRetractionsBySenderAndModerationByTheOwnerRedactAndOthersRetractionsAreRefused() async throws {
        let pair = try await RichPair.start("xretract", withJuliet: true)
        defer { pair.close() }
        let juliet = try XCTUnwrap(pair.juliet)
        let byStanzaID = try await pair.xmppSays("retract me by stanza-id")
        let byOriginID = try await pair.xmppSays("retract me by origin-id")
        let kept = try await pair.xmppSays("juliet cannot retract me")
        let ghost = byStanzaID.event.sender

        // XEP-0424 v0.4 (the stanza-id) and ≤ v0.3 (fastened to the origin-id): each redacts, as Romeo's ghost.
        try pair.romeo.sendGroupchat(to: pair.muc, body: RichWire.retractionFallbackBody,
                                     extensions: RichWire.retractElements(stanzaID: try pair.stanzaID(of: byStanzaID.reflected)))
        let first = try await pair.redaction(of: byStanzaID.event.eventID)
        XCTAssertEqual(first["sender"]?.stringValue, ghost, first.jsonText)
        let originID = try XCTUnwrap(byOriginID.reflected.originID?.rawValue)
        try pair.romeo.sendGroupchat(to: pair.muc, body: RichWire.retractionFallbackBody,
                                     extensions: RichWire.fastenRetractElements(originID: originID))
        let second = try await pair.redaction(of: byOriginID.event.eventID)
        XCTAssertEqual(second["sender"]?.stringValue, ghost, second.jsonText)

        // Juliet tries both forms on Romeo's message: neither is applied.
        let keptStanzaID = try pair.stanzaID(of: kept.reflected)
        let keptOriginID = try XCTUnwrap(kept.reflected.originID?.rawValue)
        try juliet.sendGroupchat(to: pair.muc, body: RichWire.retractionFallbackBody,
                                 extensions: RichWire.retractElements(stanzaID: keptStanzaID))
        try juliet.sendGroupchat(to: pair.muc, body: RichWire.retractionFallbackBody,
                                 extensions: RichWire.fastenRetractElements(originID: keptOriginID))
        _ = try await pair.timeline(untilXMPPSentinel: "retraction sentinel", by: juliet)
        let isKeptRedacted = try await pair.alice.isRedacted(kept.event.eventID, in: pair.room)
        XCTAssertFalse(isKeptRedacted, "Juliet retracted Romeo's message")

        // Moderation: Romeo owns the MUC, so mod_muc_moderation lets him remove alice's message and Juliet's; the room
        // announces it and the bridge redacts both Matrix events (alice's by the bot, which the room's admin lets redact).
        // ejabberd 23.01 has no XEP-0425 (RICH.md A3; it comes in 23.04): the room refuses the request, nothing is
        // announced and nothing is redacted — the other half of this test (retractions) holds on both servers.
        let moderates = pair.world.bed.xmppServer == .prosody
        try await pair.grantBotModeratorPower()
        let (aliceEventID, aliceSeen) = try await pair.aliceSays("a matrix message the owner removes")
        let juliets = try await pair.xmppSays("a juliet message the owner removes", by: juliet)
        for stanzaID in [try pair.stanzaID(of: aliceSeen), try pair.stanzaID(of: juliets.reflected)] {
            let answer = try await pair.romeo.request(IQ(
                type: .set, to: pair.muc.bare, payload: .other(RichWire.moderationPayload(stanzaID: stanzaID, reason: "off topic"))))
            if moderates {
                XCTAssertEqual(answer.type, .result, "moderation refused: \(answer.error.map(String.init(describing:)) ?? "-")")
            } else {
                XCTAssertEqual(answer.error?.condition, .serviceUnavailable, "ejabberd 23.01 accepted a XEP-0425 request")
            }
        }
        if moderates {
            _ = try await pair.redaction(of: aliceEventID)
            _ = try await pair.redaction(of: juliets.event.eventID)
        }

        // No retraction's fallback body became a message, nothing else was redacted.
        let timeline = try await pair.timeline(untilXMPPSentinel: "moderation sentinel")
        let strays = timeline.filter { $0.body?.contains("retracted a previous message") == true }
        XCTAssertEqual(strays.map(\.description), [], "a retraction's fallback body was bridged as a message")
        let stillKept = try await pair.alice.isRedacted(kept.event.eventID, in: pair.room)
        XCTAssertFalse(stillKept)
        let redactions = timeline.filter { $0.type == "m.room.redaction" }
        XCTAssertEqual(redactions.count, moderates ? 4 : 2, redactions.map(\.raw.jsonText).joined(separator: "\n"))
    }

    func testReactionSetsBecomeAnnotationsFromTheGhostAndTheirRedactions() async throws {
        let pair = try await RichPair.start("xreact")
        defer { pair.close() }
        let ghost = try await pair.xmppSays("hello from romeo").event.sender
        let (eventID, seen) = try await pair.aliceSays("react to this, romeo")
        let stanzaID = try pair.stanzaID(of: seen)

        try pair.romeo.sendGroupchat(to: pair.muc, body: nil, extensions: RichWire.reactionElements(id: stanzaID, ["👍"]))
        let thumbs = try await pair.matrixEvent("the 👍 reaction") { $0.type == "m.reaction" && $0.reactionKey == "👍" }
        XCTAssertEqual(thumbs.sender, ghost)
        XCTAssertEqual(thumbs.relationType, "m.annotation")
        XCTAssertEqual(thumbs.relatedEventID, eventID)

        // The set is replaced: 👍 goes (its event is redacted), 🎉 comes.
        try pair.romeo.sendGroupchat(to: pair.muc, body: nil, extensions: RichWire.reactionElements(id: stanzaID, ["🎉"]))
        _ = try await pair.redaction(of: thumbs.eventID)
        let party = try await pair.matrixEvent("the 🎉 reaction") { $0.type == "m.reaction" && $0.reactionKey == "🎉" }
        XCTAssertEqual(party.sender, ghost)
        XCTAssertEqual(party.relatedEventID, eventID)

        // The empty set removes the rest.
        try pair.romeo.sendGroupchat(to: pair.muc, body: nil, extensions: RichWire.reactionElements(id: stanzaID, []))
        _ = try await pair.redaction(of: party.eventID)

        let timeline = try await pair.timeline(untilXMPPSentinel: "reaction sentinel")
        let reactions = timeline.filter { $0.type == "m.reaction" }
        XCTAssertEqual(reactions.map(\.eventID), [thumbs.eventID, party.eventID], "one event per added key, nothing doubled")
        XCTAssertTrue(reactions.allSatisfy(\.isRedacted), "no live reaction remains")
    }

    func testStylingBecomesHTMLUnlessUnstyledAndALeadingNickBecomesAMention() async throws {
        let pair = try await RichPair.start("xformat")
        defer { pair.close() }
        let styled = try await pair.xmppSays("*bold* _it_")
        XCTAssertEqual(styled.event.raw.at("content", "format")?.stringValue, "org.matrix.custom.html", styled.event.raw.jsonText)
        let html = styled.event.raw.at("content", "formatted_body")?.stringValue ?? ""
        XCTAssertTrue(html.contains("<strong>bold</strong>"), html)
        XCTAssertTrue(html.contains("<em>it</em>"), html)

        let unstyled = try await pair.xmppSays("*bold* _it_ but unstyled", extensions: [RichWire.unstyledElement])
        XCTAssertNil(unstyled.event.raw.at("content", "formatted_body"), unstyled.event.raw.jsonText)

        // Everything is escaped: markup in the text stays text.
        let hostile = try await pair.xmppSays("*<script>alert(1)</script>* & co")
        let hostileHTML = hostile.event.raw.at("content", "formatted_body")?.stringValue ?? ""
        XCTAssertFalse(hostileHTML.contains("<script"), hostileHTML)
        XCTAssertTrue(hostileHTML.contains("&lt;script&gt;"), hostileHTML)

        // A leading "Nick:" naming alice's puppet occupant mentions alice.
        _ = try await pair.aliceSays("alice is here")
        let mention = try await pair.xmppSays("\(RichPair.puppetNick): hi")
        let mentioned = mention.event.raw.at("content", "m.mentions", "user_ids")?.arrayValue?.compactMap(\.stringValue) ?? []
        XCTAssertTrue(mentioned.contains(pair.alice.userID), mention.event.raw.jsonText)
        let mentionHTML = mention.event.raw.at("content", "formatted_body")?.stringValue ?? ""
        let encoded = pair.alice.userID.replacingOccurrences(of: "@", with: "%40").replacingOccurrences(of: ":", with: "%3A")
        XCTAssertTrue(mentionHTML.contains("https://matrix.to/#/\(pair.alice.userID)") || mentionHTML.contains("https://matrix.to/#/\(encoded)"),
                      "a pill to alice in \(mentionHTML)")

        let timeline = try await pair.timeline(untilXMPPSentinel: "format sentinel")
        let bodies = pair.ghostMessages(in: timeline).compactMap(\.body)
        XCTAssertEqual(bodies, ["*bold* _it_", "*bold* _it_ but unstyled", "*<script>alert(1)</script>* & co",
                                "\(RichPair.puppetNick): hi", "format sentinel"], "byte-exact bodies, each once")
        // The nick "Alice Liddell" is alice's own occupant (renamed after her displayname): no ghost stands for it, so
        // nothing else can be mentioned by it.
        let members = try await pair.alice.members(of: pair.room)
        XCTAssertEqual(Set(members.keys), [pair.alice.userID, pair.world.botUserID, styled.event.sender],
                       "members: \(members)")
    }
}
