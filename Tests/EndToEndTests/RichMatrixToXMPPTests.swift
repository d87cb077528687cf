import Foundation
import IsthmusCommon
import Matrix
import TestSupport
import XCTest
import XMLStream
import XMPP

/// Issue 12, Matrix → XMPP: what an XMPP client in the MUC (Romeo) receives from alice's puppet occupant when she
/// replies, edits, redacts, reacts, formats and mentions on Matrix. The wire elements are the contract (RICH.md §1–5).
final class RichMatrixToXMPPTests: XCTestCase {
    func testRepliesCarryXEP0461AndAMarkedQuoteAndPillsBecomeNicksWithoutMatrixIDs() async throws {
        let pair = try await RichPair.start("mreply")
        defer { pair.close() }
        let romeoOccupant = pair.muc.bare.with(resource: "Romeo")!
        // The quoted text has an astral character: fallback ranges count code points, not UTF-16 units.
        let original = try await pair.xmppSays("original from romeo 🌹")
        let originalStanzaID = try pair.stanzaID(of: original.reflected)
        let ghost = original.event.sender
        var received: [Message] = []

        // A reply as current clients send it (spec v1.13+: no fallback in the Matrix event).
        try await pair.alice.reply("a reply ✨", to: original.event.eventID, in: pair.room)
        let reply = try await pair.fromPuppet("the reply") { $0.body?.contains("a reply ✨") == true }
        assertReply(reply, to: romeoOccupant, id: originalStanzaID, text: "a reply ✨")
        received.append(reply)

        // A reply with the legacy fallback (quoted "> <@ghost:server> …" lines and <mx-reply>): the same clean result.
        let legacyBody = "> <\(ghost)> original from romeo 🌹\n\nlegacy reply"
        let legacyHTML = "<mx-reply><blockquote><a href=\"https://matrix.to/#/\(pair.room)/\(original.event.eventID)?via=localhost\">"
            + "In reply to</a> <a href=\"https://matrix.to/#/\(ghost)\">\(ghost)</a><br>original from romeo 🌹</blockquote></mx-reply>"
            + "legacy reply"
        try await pair.alice.reply(legacyBody, to: original.event.eventID, in: pair.room,
                                   extra: ["format": "org.matrix.custom.html", "formatted_body": legacyHTML])
        let legacy = try await pair.fromPuppet("the legacy reply") { $0.body?.contains("legacy reply") == true }
        assertReply(legacy, to: romeoOccupant, id: originalStanzaID, text: "legacy reply")
        received.append(legacy)

        // Mentions: a pill to Romeo's ghost becomes his nick. The plain body names the ghost's mxid, as Matrix clients
        // write it: the formatted body is the source. A pill whose text is the mxid itself becomes the nick too; its
        // link is percent-encoded as the spec asks of matrix.to links (ghost ids may hold '/', from the occupant-id).
        try await pair.alice.send("\(ghost): are you there?", to: pair.room, extra: [
            "format": "org.matrix.custom.html", "formatted_body": "<a href=\"https://matrix.to/#/\(ghost)\">Romeo</a>: are you there?",
            "m.mentions": ["user_ids": [ghost]],
        ])
        let mention = try await pair.fromPuppet("the mention") { $0.body?.contains("are you there?") == true }
        XCTAssertEqual(mention.body, "Romeo: are you there?")
        try await pair.alice.send("\(ghost), second ping", to: pair.room, extra: [
            "format": "org.matrix.custom.html", "formatted_body": "<a href=\"https://matrix.to/#/\(matrixToEncoded(ghost))\">\(ghost)</a>, second ping",
            "m.mentions": ["user_ids": [ghost]],
        ])
        let mxidPill = try await pair.fromPuppet("the mxid pill") { $0.body?.contains("second ping") == true }
        XCTAssertEqual(mxidPill.body, "Romeo, second ping")
        received += [mention, mxidPill]

        // Nothing doubled: only the sentinel follows. No Matrix id in any body, no XHTML-IM anywhere.
        let late = try await pair.puppetMessages(untilSentinel: "reply sentinel")
        XCTAssertEqual(late.map(\.body), ["reply sentinel"], "doubled or stray messages from the puppet")
        for message in received + late {
            XCTAssertEqual(RichWire.matrixIdentifiers(in: message.body ?? ""), [], "a Matrix id in \(message.body.debugDescription)")
            XCTAssertFalse(RichWire.hasXHTMLIM(message))
        }
    }

    func testEditsBecomeCorrectionsOfTheOriginalAndRedactionsBecomeRetractionsOrANotice() async throws {
        let pair = try await RichPair.start("medit")
        defer { pair.close() }
        let (eventID, original) = try await pair.aliceSays("tpyo here")
        let originalID = try XCTUnwrap(original.id?.rawValue)

        // Two edits: both corrections point at the original's id attribute (XEP-0308: never at the previous correction).
        try await pair.alice.edit(eventID, to: "typo here", in: pair.room)
        let first = try await pair.fromPuppet("the first correction") { $0.extensionElement("replace", namespace: RichWire.correction) != nil }
        XCTAssertEqual(first.extensionElement("replace", namespace: RichWire.correction)?[attribute: "id"], originalID)
        XCTAssertEqual(first.body, "typo here")
        try await pair.alice.edit(eventID, to: "typo here, fixed twice", in: pair.room)
        let second = try await pair.fromPuppet("the second correction") { $0.extensionElement("replace", namespace: RichWire.correction) != nil }
        XCTAssertEqual(second.extensionElement("replace", namespace: RichWire.correction)?[attribute: "id"], originalID)
        XCTAssertEqual(second.body, "typo here, fixed twice")
        XCTAssertNotEqual(second.id, first.id, "each correction is a stanza of its own")

        // alice redacts her own message: XEP-0424 in both versions (:1 with the stanza-id, :0 fastened to the origin-id),
        // stored by the room.
        let (doomedEventID, doomed) = try await pair.aliceSays("delete me")
        let doomedStanzaID = try pair.stanzaID(of: doomed)
        let doomedOriginID = try XCTUnwrap(doomed.originID?.rawValue, "the puppet's message has an origin-id")
        try await pair.alice.redact(doomedEventID, in: pair.room)
        let retraction = try await pair.fromPuppet("the retraction") {
            $0.extensionElement("retract", namespace: RichWire.retract1) != nil || $0.extensionElement("apply-to", namespace: RichWire.fasten) != nil
        }
        XCTAssertEqual(retraction.extensionElement("retract", namespace: RichWire.retract1)?[attribute: "id"], doomedStanzaID)
        let applyTo = retraction.extensionElement("apply-to", namespace: RichWire.fasten)
        XCTAssertEqual(applyTo?[attribute: "id"], doomedOriginID)
        XCTAssertNotNil(applyTo?.child("retract", namespace: RichWire.retract0), "apply-to carries <retract xmlns=':0'/>")
        XCTAssertNotNil(retraction.extensionElement("store", namespace: RichWire.hints), "a <store/> hint, so the room archives it")

        // bob (another Matrix user) "edits" alice's message: Synapse relays any m.replace, the bridge applies only the
        // author's.
        let bob = try await pair.world.matrixUser("bob")
        try await pair.alice.invite(bob.userID, to: pair.room)
        try await bob.join(pair.room)
        try await bob.edit(eventID, to: "hijacked by bob", in: pair.room)

        let late = try await pair.puppetMessages(untilSentinel: "edit sentinel")
        XCTAssertEqual(late.map(\.body), ["edit sentinel"], "doubled corrections or retractions")
        let hijacks = pair.romeo.queuedStanzas.filter { stanza in
            guard case .message(let message) = stanza else { return false }
            return message.extensionElement("replace", namespace: RichWire.correction)?[attribute: "id"] == originalID
        }
        XCTAssertEqual(hijacks.count, 0, "bob's edit of alice's message was applied: \(hijacks)")
        for message in [first, second, retraction] + late { XCTAssertEqual(RichWire.matrixIdentifiers(in: message.body ?? ""), []) }
    }

    func testAModeratorsRedactionModeratesTheMUCWhereThePuppetMayElseANoticeSaysItCouldNot() async throws {
        let pair = try await RichPair.start("mmoderate")
        defer { pair.close() }
        let bot = pair.world.botUserID
        let isAnnouncement: @Sendable (Stanza) -> Bool = { stanza in
            guard case .message(let message) = stanza else { return false }
            return message.extensionElement("apply-to", namespace: RichWire.fasten)?.child("moderated", namespace: RichWire.moderate0) != nil
        }

        // alice (the room's creator) redacts Romeo's message. Her puppet is no moderator of the MUC, so the bridge says
        // in the Matrix room that the XMPP copy could not be removed, and retracts nothing.
        _ = try await pair.aliceSays("alice is here")  // her puppet joins under her name
        let first = try await pair.xmppSays("romeo's words alice wants gone")
        let before = Set(try await pair.alice.timeline(of: pair.room).map(\.eventID))
        try await pair.alice.redact(first.event.eventID, in: pair.room)
        let notice = try await pair.matrixEvent("the bridge's notice") {
            $0.sender == bot && $0.msgtype == "m.notice" && !before.contains($0.eventID)
        }
        XCTAssertTrue(notice.body?.contains("XMPP") == true, notice.description)
        let late = try await pair.puppetMessages(untilSentinel: "moderation sentinel 1")
        XCTAssertEqual(late.map(\.body), ["moderation sentinel 1"], "a retraction of Romeo's message from the puppet")
        XCTAssertFalse(pair.romeo.queuedStanzas.contains(where: isAnnouncement), "the room announced a moderation")

        // Romeo (the owner) makes alice's occupant a moderator: her next redaction of his message is a XEP-0425 v0.2
        // request (what the room announces), and the room tells everyone.
        let grant = try await pair.romeo.request(IQ(type: .set, to: pair.muc.bare,
                                                    payload: .other(RichWire.roleChange(nick: RichPair.puppetNick, role: "moderator"))))
        XCTAssertEqual(grant.type, .result, "\(grant.error.map(String.init(describing:)) ?? "")")
        _ = try await pair.romeo.nextPresence(within: 10, "alice's occupant as moderator") {
            $0.from?.resource == RichPair.puppetNick && $0.mucUser?.item?.role == .moderator
        }
        let second = try await pair.xmppSays("romeo's words a moderator removes")
        let secondStanzaID = try pair.stanzaID(of: second.reflected)
        try await pair.alice.redact(second.event.eventID, in: pair.room)
        if pair.world.bed.xmppServer == .ejabberd {
            // ejabberd 23.01 has no XEP-0425 at all (RICH.md A3; it comes in 23.04): the room announces no moderation,
            // so even a moderator's redaction stays on Matrix and the room is told so, like above.
            let secondNotice = try await pair.matrixEvent("the bridge's second notice") {
                $0.sender == bot && $0.msgtype == "m.notice" && !before.contains($0.eventID) && $0.eventID != notice.eventID
            }
            XCTAssertTrue(secondNotice.body?.contains("does not support moderation") == true, secondNotice.description)
            let after = try await pair.puppetMessages(untilSentinel: "moderation sentinel 2")
            XCTAssertEqual(after.map(\.body), ["moderation sentinel 2"], "a retraction of Romeo's message from the puppet")
            return
        }
        let announcement = try await pair.romeo.nextMessage(within: 30, "the moderation announcement") {
            $0.from == pair.muc.bare && $0.extensionElement("apply-to", namespace: RichWire.fasten) != nil
        }
        let applyTo = try XCTUnwrap(announcement.extensionElement("apply-to", namespace: RichWire.fasten))
        XCTAssertEqual(applyTo[attribute: "id"], secondStanzaID)
        let moderated = applyTo.child("moderated", namespace: RichWire.moderate0)
        XCTAssertEqual(moderated?[attribute: "by"], pair.muc.bare.with(resource: RichPair.puppetNick)!.description)
        XCTAssertNotNil(moderated?.child("retract", namespace: RichWire.retract0))

        // Once each, and no notice this time.
        let after = try await pair.puppetMessages(untilSentinel: "moderation sentinel 2")
        XCTAssertEqual(after.map(\.body), ["moderation sentinel 2"])
        XCTAssertFalse(pair.romeo.queuedStanzas.contains(where: isAnnouncement), "a second announcement")
        let notices = try await pair.alice.timeline(of: pair.room).filter { $0.sender == bot && $0.msgtype == "m.notice" && !before.contains($0.eventID) }
        XCTAssertEqual(notices.map(\.eventID), [notice.eventID], "a notice although the moderation worked")
    }

    func testReactionsArriveAsTheReactorsWholeSetWithAStoreHint() async throws {
        let pair = try await RichPair.start("mreact")
        defer { pair.close() }
        let target = try await pair.xmppSays("react to me")
        let stanzaID = try pair.stanzaID(of: target.reflected)
        let isReaction: @Sendable (Message) -> Bool = { RichWire.reactions(in: $0) != nil }

        let thumbs = try await pair.alice.react("👍", to: target.event.eventID, in: pair.room)
        assertReactions(try await pair.fromPuppet("reactions {👍}", where: isReaction), id: stanzaID, ["👍"])
        let party = try await pair.alice.react("🎉", to: target.event.eventID, in: pair.room)
        assertReactions(try await pair.fromPuppet("reactions {👍, 🎉}", where: isReaction), id: stanzaID, ["👍", "🎉"])
        try await pair.alice.redact(thumbs, in: pair.room)
        assertReactions(try await pair.fromPuppet("reactions {🎉}", where: isReaction), id: stanzaID, ["🎉"])
        try await pair.alice.redact(party, in: pair.room)
        assertReactions(try await pair.fromPuppet("reactions {}", where: isReaction), id: stanzaID, [])

        let late = try await pair.puppetMessages(untilSentinel: "reaction sentinel")
        XCTAssertEqual(late.map(\.body), ["reaction sentinel"], "doubled reaction sets")
    }

    func testHTMLBecomesXEP0393StylingAndPlainBodiesAreMarkedUnstyled() async throws {
        let pair = try await RichPair.start("mformat")
        defer { pair.close() }
        try await pair.alice.send("**bold** and *it* `x`", to: pair.room, extra: [
            "format": "org.matrix.custom.html", "formatted_body": "<strong>bold</strong> and <em>it</em> <code>x</code>",
        ])
        let styled = try await pair.fromPuppet("the styled message") { $0.body?.contains("bold") == true }
        XCTAssertEqual(styled.body, "*bold* and _it_ `x`")
        XCTAssertNil(styled.extensionElement("unstyled", namespace: RichWire.styling), "styling is meant here")

        // A plain body with styling characters and no formatted_body: the sender asked for no formatting.
        try await pair.alice.send("*not bold*", to: pair.room)
        let plain = try await pair.fromPuppet("the plain message") { $0.body?.contains("not bold") == true }
        XCTAssertEqual(plain.body, "*not bold*")
        XCTAssertNotNil(plain.extensionElement("unstyled", namespace: RichWire.styling), "<unstyled xmlns='urn:xmpp:styling:0'/>")

        let late = try await pair.puppetMessages(untilSentinel: "format sentinel")
        XCTAssertEqual(late.map(\.body), ["format sentinel"])
        for message in [styled, plain] + late { XCTAssertFalse(RichWire.hasXHTMLIM(message), "XHTML-IM is never sent") }
    }

    // MARK: Assertions

    /// A matrix.to identifier percent-encoded as the spec says (RFC 3986: everything but unreserved characters).
    private func matrixToEncoded(_ identifier: String) -> String {
        var unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        unreserved.insert(charactersIn: "-._~")
        return identifier.addingPercentEncoding(withAllowedCharacters: unreserved) ?? identifier
    }

    /// A XEP-0461 reply to `id` by `author` whose body is a quote marked as XEP-0428 fallback, then exactly `text`.
    private func assertReply(_ message: Message, to author: JID, id: String, text: String,
                             file: StaticString = #filePath, line: UInt = #line) {
        let reply = message.extensionElement("reply", namespace: RichWire.reply)
        XCTAssertEqual(reply?[attribute: "to"], author.description, "reply/@to", file: file, line: line)
        XCTAssertEqual(reply?[attribute: "id"], id, "reply/@id is the stanza-id of the original", file: file, line: line)
        let ranges = RichWire.fallbackRanges(of: RichWire.reply, in: message)
        XCTAssertEqual(ranges.count, 1, "one fallback range for the quote", file: file, line: line)
        XCTAssertEqual(ranges.first?.start, 0, "the quote comes first", file: file, line: line)
        let body = message.body ?? ""
        XCTAssertEqual(RichWire.body(body, withoutFallbackOf: RichWire.reply, in: message), text,
                       "the body without the fallback range (code points) in \(body.debugDescription)", file: file, line: line)
        XCTAssertTrue(body.hasPrefix(">"), "the fallback is a quote: \(body.debugDescription)", file: file, line: line)
        XCTAssertEqual(RichWire.matrixIdentifiers(in: body), [], "a Matrix id in \(body.debugDescription)", file: file, line: line)
    }

    /// A XEP-0444 reaction set on `id` with exactly `keys`, with a `<store/>` hint.
    private func assertReactions(_ message: Message, id: String, _ keys: Set<String>,
                                 file: StaticString = #filePath, line: UInt = #line) {
        let reactions = RichWire.reactions(in: message)
        XCTAssertEqual(reactions?.id, id, "reactions/@id is the stanza-id of the target", file: file, line: line)
        XCTAssertEqual(Set(reactions?.keys ?? []), keys, file: file, line: line)
        XCTAssertEqual(reactions?.keys.count, keys.count, "no key twice", file: file, line: line)
        XCTAssertNotNil(message.extensionElement("store", namespace: RichWire.hints), "a <store/> hint", file: file, line: line)
    }
}
