import Foundation
import IsthmusCommon
import Matrix
import TestSupport
import XCTest
import XMLStream
import XMPP

/// Issue 30, "Done means": an Element-like client (nio, with end-to-end encryption) and XMPP occupants use every rich
/// feature of the unencrypted tests (RichXMPPToMatrixTests, RichMatrixToXMPPTests) in an encrypted room linked to a
/// MUC. The bridge decrypts Matrix events at intake and encrypts its ghosts' sends; relations (`m.relates_to`) stay in
/// the clear beside the ciphertext (spec §11.12.4.2 "m.megolm.v1.aes-sha2"); redactions are never encrypted.
final class EncryptedRichTests: XCTestCase {
    func testAnOccupantsCorrectionReplyReactionAndRetractionReachAnEndToEndClientEncrypted() async throws {
        let e = try await EncryptedRichRoom.start("enc-xrich")
        defer { e.close() }
        let ghost = try XCTUnwrap(e.ghosts["Romeo"])

        // alice's message, as Romeo sees it: XMPP replies and reactions name its stanza-id.
        let aliceText = "alice's message, end to end"
        let aliceEventID = try await e.nio.send(aliceText, to: e.room)
        let aliceSeen = try await e.romeo.nextMessage(from: e.muc, nick: EncryptedRichRoom.puppetNick, "alice's message") { $0.body == aliceText }
        let aliceStanzaID = try e.stanzaID(of: aliceSeen)

        // XEP-0308: Romeo corrects his message; nio decrypts an m.replace of its event.
        let original = try await e.romeo.sendAndReflect(to: e.muc, body: "helo wrld")
        let originalEvent = try await e.nio.event(in: e.room, "Romeo's message") { $0.sender == ghost && $0.body == "helo wrld" }
        try e.romeo.sendGroupchat(to: e.muc, body: "hello world",
                                  extensions: [RichWire.replaceElement(id: try XCTUnwrap(original.id?.rawValue))])
        let edit = try await e.nio.event(in: e.room, "the edit") { $0.sender == ghost && $0.relationType == "m.replace" }
        XCTAssertEqual(edit.type, "m.room.message", edit.description)
        XCTAssertEqual(edit.relatedEventID, originalEvent.eventID, edit.description)
        XCTAssertEqual(edit.content.at("m.new_content", "body")?.stringValue, "hello world", edit.description)

        // XEP-0461: Romeo replies to alice's message.
        let quote = RichWire.quote(nick: EncryptedRichRoom.puppetNick, text: aliceText)
        try e.romeo.sendGroupchat(to: e.muc, body: quote + "romeo's reply", extensions: RichWire.replyExtensions(
            to: e.muc.bare.with(resource: EncryptedRichRoom.puppetNick)!, id: aliceStanzaID, quotedPrefix: quote))
        let reply = try await e.nio.event(in: e.room, "the reply") { $0.sender == ghost && $0.body?.contains("romeo's reply") == true }
        XCTAssertEqual(reply.inReplyTo, aliceEventID, reply.description)
        XCTAssertEqual(reply.body, "romeo's reply", "the quoted fallback is not bridged")

        // XEP-0444: Romeo reacts to alice's message.
        try e.romeo.sendGroupchat(to: e.muc, body: nil, extensions: RichWire.reactionElements(id: aliceStanzaID, ["👍"]))
        let reaction = try await e.nio.event(in: e.room, "the reaction") { $0.sender == ghost && $0.type == "m.reaction" }
        XCTAssertEqual(reaction.relationType, "m.annotation", reaction.description)
        XCTAssertEqual(reaction.relatedEventID, aliceEventID, reaction.description)
        XCTAssertEqual(reaction.reactionKey, "👍", reaction.description)

        // XEP-0424: Romeo retracts a message of his; its event is redacted by his ghost, in the clear.
        let doomed = try await e.romeo.sendAndReflect(to: e.muc, body: "retract me")
        let doomedEvent = try await e.nio.event(in: e.room, "the message to retract") { $0.sender == ghost && $0.body == "retract me" }
        try e.romeo.sendGroupchat(to: e.muc, body: RichWire.retractionFallbackBody,
                                  extensions: RichWire.retractElements(stanzaID: try e.stanzaID(of: doomed)))
        let redaction = try await e.nio.event(in: e.room, "the redaction of \(doomedEvent.eventID)") {
            $0.type == "m.room.redaction" && $0.content["redacts"]?.stringValue == doomedEvent.eventID
        }
        XCTAssertEqual(redaction.sender, ghost, redaction.description)
        let retracted = try await e.nio.events(in: e.room, count: 0, timeout: 0).first { $0.eventID == doomedEvent.eventID }
        XCTAssertEqual(retracted?.redacted, true, retracted?.description ?? "nio lost \(doomedEvent.eventID)")

        // Each once, in order, all but the redaction encrypted and decrypted by nio; no retraction's fallback bridged.
        try e.romeo.sendGroupchat(to: e.muc, body: "xmpp sentinel")
        let seen = try await e.nio.events(in: e.room, untilBody: "xmpp sentinel", from: ghost)
        let fromGhost = seen.filter { $0.sender == ghost && EncryptedRichRoom.messageTypes.contains($0.type) }
        XCTAssertEqual(fromGhost.map(\.eventID), [originalEvent.eventID, edit.eventID, reply.eventID, reaction.eventID,
                                                  doomedEvent.eventID, redaction.eventID, seen.last?.eventID ?? "the sentinel"],
                       fromGhost.map(\.description).joined(separator: "\n"))
        XCTAssertEqual(fromGhost.filter { !$0.decrypted }.map(\.type), ["m.room.redaction"],
                       "every event of the ghost but its redaction comes encrypted: \(fromGhost.map(\.description))")
        XCTAssertFalse(seen.contains { $0.body?.contains("retracted a previous message") == true }, "a retraction's fallback was bridged")

        // On the homeserver: ciphertext, with each relation in the clear beside it; the redaction plain.
        let timeline = try await e.alice.timeline(of: e.room)
        for (event, relation) in [(edit, "m.replace"), (reaction, "m.annotation")] {
            let stored = try XCTUnwrap(timeline.first { $0.eventID == event.eventID }, "\(event.eventID) on the homeserver")
            XCTAssertEqual(stored.type, "m.room.encrypted", stored.raw.jsonText)
            XCTAssertNotNil(stored.raw.at("content", "ciphertext"), stored.raw.jsonText)
            XCTAssertEqual(stored.relationType, relation, "the relation is in the clear: \(stored.raw.jsonText)")
            XCTAssertEqual(stored.relatedEventID, event.relatedEventID, stored.raw.jsonText)
        }
        let storedReply = try XCTUnwrap(timeline.first { $0.eventID == reply.eventID }, "the reply on the homeserver")
        XCTAssertEqual(storedReply.type, "m.room.encrypted", storedReply.raw.jsonText)
        XCTAssertEqual(storedReply.raw.at("content", "m.relates_to", "m.in_reply_to", "event_id")?.stringValue, aliceEventID,
                       "the reply's relation is in the clear: \(storedReply.raw.jsonText)")
        XCTAssertEqual(timeline.first { $0.eventID == redaction.eventID }?.type, "m.room.redaction")
        XCTAssertEqual(timeline.first { $0.eventID == doomedEvent.eventID }?.isRedacted, true)
    }

    func testAnEndToEndClientsEditReplyReactionAndRedactionReachBothOccupants() async throws {
        let e = try await EncryptedRichRoom.start("enc-mrich")
        defer { e.close() }
        let ghost = try XCTUnwrap(e.ghosts["Romeo"])
        let occupants = [e.romeo, e.juliet]
        let fromAlice = { (client: XMPPTestClient, what: String, matches: @escaping @Sendable (Message) -> Bool) async throws -> Message in
            try await client.nextMessage(from: e.muc, nick: EncryptedRichRoom.puppetNick, what, where: matches)
        }

        // Romeo's message, which alice answers and reacts to: its stanza-id is the same for every occupant.
        let target = try await e.romeo.sendAndReflect(to: e.muc, body: "romeo's words")
        let targetStanzaID = try e.stanzaID(of: target)
        let targetEvent = try await e.nio.event(in: e.room, "Romeo's message") { $0.sender == ghost && $0.body == "romeo's words" }

        // alice edits her message: a XEP-0308 correction of the original's id attribute.
        let originalEventID = try await e.nio.send("tpyo here", to: e.room)
        var originals: [String] = []
        for occupant in occupants {
            let original = try await fromAlice(occupant, "the original") { $0.body == "tpyo here" }
            originals.append(try XCTUnwrap(original.id?.rawValue))
        }
        let editID = try await e.nio.edit(originalEventID, to: "typo here", in: e.room)
        for (occupant, originalID) in zip(occupants, originals) {
            let correction = try await fromAlice(occupant, "the correction") { $0.extensionElement("replace", namespace: RichWire.correction) != nil }
            XCTAssertEqual(correction.extensionElement("replace", namespace: RichWire.correction)?[attribute: "id"], originalID)
            XCTAssertEqual(correction.body, "typo here")
        }

        // alice replies to Romeo's message: XEP-0461 naming its stanza-id, the quote marked as fallback.
        let replyID = try await e.nio.reply("alice answers ✨", to: targetEvent.eventID, in: e.room)
        for occupant in occupants {
            let reply = try await fromAlice(occupant, "the reply") { $0.extensionElement("reply", namespace: RichWire.reply) != nil }
            let element = reply.extensionElement("reply", namespace: RichWire.reply)
            XCTAssertEqual(element?[attribute: "to"], e.muc.bare.with(resource: "Romeo")!.description, "reply/@to")
            XCTAssertEqual(element?[attribute: "id"], targetStanzaID, "reply/@id is the stanza-id of the original")
            XCTAssertEqual(RichWire.body(reply.body ?? "", withoutFallbackOf: RichWire.reply, in: reply), "alice answers ✨",
                           "the body without its fallback: \(reply.body.debugDescription)")
        }

        // alice reacts to Romeo's message: a XEP-0444 set with a <store/> hint.
        let reactionID = try await e.nio.react("👍", to: targetEvent.eventID, in: e.room)
        for occupant in occupants {
            let reaction = try await fromAlice(occupant, "the reaction") { RichWire.reactions(in: $0) != nil }
            XCTAssertEqual(RichWire.reactions(in: reaction)?.id, targetStanzaID)
            XCTAssertEqual(RichWire.reactions(in: reaction)?.keys, ["👍"])
            XCTAssertNotNil(reaction.extensionElement("store", namespace: RichWire.hints), "a <store/> hint")
        }

        // alice redacts her message: XEP-0424 in both versions (:1 with the stanza-id, :0 fastened to the origin-id).
        let doomedEventID = try await e.nio.send("delete me", to: e.room)
        var doomed: [Message] = []
        for occupant in occupants { doomed.append(try await fromAlice(occupant, "the message to retract") { $0.body == "delete me" }) }
        let redactionID = try await e.nio.redact(doomedEventID, in: e.room)
        for (occupant, seen) in zip(occupants, doomed) {
            let retraction = try await fromAlice(occupant, "the retraction") {
                $0.extensionElement("retract", namespace: RichWire.retract1) != nil || $0.extensionElement("apply-to", namespace: RichWire.fasten) != nil
            }
            XCTAssertEqual(retraction.extensionElement("retract", namespace: RichWire.retract1)?[attribute: "id"], try e.stanzaID(of: seen))
            let applyTo = retraction.extensionElement("apply-to", namespace: RichWire.fasten)
            XCTAssertEqual(applyTo?[attribute: "id"], try XCTUnwrap(seen.originID?.rawValue, "the puppet's message has an origin-id"))
            XCTAssertNotNil(applyTo?.child("retract", namespace: RichWire.retract0), "apply-to carries <retract xmlns=':0'/>")
        }

        // Each once: only the sentinel follows.
        try await e.nio.send("matrix sentinel", to: e.room)
        for occupant in occupants {
            let late = try await occupant.messages(from: e.muc, nick: EncryptedRichRoom.puppetNick, untilBody: "matrix sentinel")
            XCTAssertEqual(late.map(\.body), ["matrix sentinel"], "doubled or stray messages from alice's occupant")
        }

        // What the bridge read was ciphertext (with the relations beside it); the redaction plain.
        let timeline = try await e.alice.timeline(of: e.room)
        for id in [editID, replyID, reactionID] {
            let stored = try XCTUnwrap(timeline.first { $0.eventID == id }, "\(id) on the homeserver")
            XCTAssertEqual(stored.type, "m.room.encrypted", stored.raw.jsonText)
            XCTAssertNotNil(stored.raw.at("content", "m.relates_to"), stored.raw.jsonText)
        }
        XCTAssertEqual(timeline.first { $0.eventID == redactionID }?.type, "m.room.redaction")
    }
}

/// An encrypted Matrix room linked to a MUC, set up as EncryptedLinkedRoomTests does: the bridge with
/// `encryption.allow`, Romeo (XMPP bob) and Juliet (XMPP carol) in the MUC, alice's room encrypted then linked, and alice
/// on nio (her puppet occupant is "alice") once both ghosts joined.
private struct EncryptedRichRoom {
    /// alice's puppet occupant's nick (she sets no displayname).
    static let puppetNick = "alice"
    /// The timeline event types of messages, reactions and redactions (as nio decrypted them, or could not).
    static let messageTypes: Set<String> = ["m.room.message", "m.reaction", "m.room.redaction", "m.room.encrypted"]

    let world: EndToEndHarness
    let alice: MatrixTestUser
    let nio: NioUser
    let muc: JID
    let room: String
    let romeo: XMPPTestClient
    let juliet: XMPPTestClient
    /// Each occupant's ghost, by nick ("Romeo", "Juliet").
    let ghosts: [String: String]

    static func start(_ name: String) async throws -> EncryptedRichRoom {
        let world = try EndToEndHarness(name)
        try world.editConfig { $0 + "\nencryption:\n  allow: true\n  pickle_key: \"\(GhostDeviceTests.pickleKey)\"\n" }
        try await world.startBridge()
        let muc = world.muc(name)
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let juliet = try await world.xmppUser("carol")
        try await juliet.joinRoom(muc, nick: "Juliet")

        let alice = try await world.matrixUser("alice")
        let room = try await alice.createRoom(invite: [world.botUserID])
        try await alice.setState("m.room.encryption", content: EncryptedRoomTests.megolm, in: room)
        let linked = try world.cli("link", room, muc.description)
        XCTAssertEqual(linked.status, 0, "an encrypted room may be linked with encryption allowed: \(linked.stderr)")
        try await world.waitForLink(room, status: "active")
        let ghosts = try await eventuallyValue("both occupants' ghosts in the room", timeout: 30) { () -> [String: String]? in
            let members = try await alice.members(of: room)
            let byNick = Dictionary(members.compactMap { id, name in name.map { ($0, id) } }, uniquingKeysWith: { first, _ in first })
            guard let romeoGhost = byNick["Romeo"], let julietGhost = byNick["Juliet"] else { return nil }
            return ["Romeo": romeoGhost, "Juliet": julietGhost]
        }
        let nio = try await NioUser("alice", bed: world.bed, storeDirectory: world.directory.appendingPathComponent("nio-alice"))
        for ghost in ghosts.values { try await nio.waitJoined(ghost, in: room) }
        return EncryptedRichRoom(world: world, alice: alice, nio: nio, muc: muc, room: room, romeo: romeo, juliet: juliet, ghosts: ghosts)
    }

    /// The stanza-id the room gave `message` (the one every occupant sees).
    func stanzaID(of message: Message) throws -> String {
        try XCTUnwrap(message.stanzaID(by: muc.bare)?.rawValue, "the room gave \(message.body.debugDescription) no stanza-id")
    }

    /// Closes the XMPP clients and stops the bridge (expecting a clean exit).
    func close() {
        romeo.close()
        juliet.close()
        world.stopBridge()
    }
}
