import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMLStream
import XMPP

/// The rich-message stanzas the end-to-end tests send (``RichWire``) against the test bed's real Prosody, without
/// the bridge: the room relays them intact, archives what must be archived, and mod_muc_moderation (prosody-modules)
/// lets the room's owner retract a message for everyone.
final class RichWireRealServerTests: XCTestCase {
    func testTheRoomRelaysRepliesCorrectionsRetractionsReactionsAndUnstyledIntact() async throws {
        let bed = try TestBed.fromEnvironment()
        let room = bed.uniqueRoom("richwire")
        let romeo = try await bed.client("bob"), juliet = try await bed.client("carol")
        defer { romeo.close(); juliet.close() }
        try await romeo.joinRoom(room, nick: "Romeo")
        try await juliet.joinRoom(room, nick: "Juliet")
        let original = try await romeo.sendAndReflect(to: room, body: "original 🌹")
        let stanzaID = try XCTUnwrap(original.stanzaID(by: room)?.rawValue)
        let originID = try XCTUnwrap(original.originID?.rawValue)
        let quote = RichWire.quote(nick: "Romeo", text: "original 🌹")

        let stanzas: [(body: String?, extensions: [XElement])] = [
            (quote + "a reply", RichWire.replyExtensions(to: room.with(resource: "Romeo")!, id: stanzaID, quotedPrefix: quote)),
            ("corrected", [RichWire.replaceElement(id: originID)]),
            (RichWire.retractionFallbackBody, RichWire.retractElements(stanzaID: stanzaID)),
            (RichWire.retractionFallbackBody, RichWire.fastenRetractElements(originID: originID)),
            (nil, RichWire.reactionElements(id: stanzaID, ["👍", "🎉"])),
            ("*plain*", [RichWire.unstyledElement]),
        ]
        for (body, extensions) in stanzas {
            let sent = try romeo.sendGroupchat(to: room, body: body, extensions: extensions)
            let copy = try await juliet.nextMessage(from: room, nick: "Romeo", "the copy of \(extensions.map(\.name))") {
                $0.originID == sent.originID
            }
            XCTAssertEqual(copy.body, body)
            for element in extensions {
                XCTAssertEqual(copy.extensionElement(element.name, namespace: element.namespace).map(RichWire.canonical),
                               RichWire.canonical(element), "relayed intact")
            }
            // Everything here has a body or a <store/> hint, so the room archives it and gives it a stanza-id.
            XCTAssertNotNil(copy.stanzaID(by: room), "archived: \(extensions.map(\.name))")
        }
    }

    func testTheOwnerModeratesAMessageForEveryoneAndAParticipantCannot() async throws {
        let bed = try TestBed.fromEnvironment()
        let room = bed.uniqueRoom("moderate")
        let romeo = try await bed.client("bob"), juliet = try await bed.client("carol")
        defer { romeo.close(); juliet.close() }
        try await romeo.joinRoom(room, nick: "Romeo")  // creates the room: owner, moderator
        try await juliet.joinRoom(room, nick: "Juliet")
        let info = try await romeo.request(IQ(type: .get, to: room, payload: .discoInfo(DiscoInfo())))
        guard case .discoInfo(let features)? = info.payload else { return XCTFail("disco#info: \(info)") }
        if bed.xmppServer == .ejabberd {
            // ejabberd 23.01 has no XEP-0425 (RICH.md A3): no feature, and the owner's request is refused. The bridge
            // reads the feature and tells Matrix moderators their redaction stays on Matrix.
            XCTAssertFalse(features.features.contains(where: { $0.hasPrefix("urn:xmpp:message-moderate") }), "\(features.features)")
            let message = try await juliet.sendAndReflect(to: room, body: "moderate me")
            let stanzaID = try XCTUnwrap(message.stanzaID(by: room)?.rawValue)
            let answer = try await romeo.request(IQ(type: .set, to: room, payload: .other(RichWire.moderationPayload(stanzaID: stanzaID, reason: "spam"))))
            XCTAssertEqual(answer.error?.condition, .serviceUnavailable)
            return
        }
        XCTAssertTrue(features.features.contains(RichWire.moderate0), "the room announces XEP-0425 v0.2: \(features.features)")

        let julietsMessage = try await juliet.sendAndReflect(to: room, body: "moderate me")
        let stanzaID = try XCTUnwrap(julietsMessage.stanzaID(by: room)?.rawValue)

        // A participant may not.
        let refused = try await juliet.request(IQ(type: .set, to: room, payload: .other(RichWire.moderationPayload(stanzaID: stanzaID, reason: nil))))
        XCTAssertEqual(refused.type, .error)
        XCTAssertEqual(refused.error?.condition, .forbidden)

        // The owner may: everyone gets the announcement from the room's bare JID.
        let answer = try await romeo.request(IQ(type: .set, to: room, payload: .other(RichWire.moderationPayload(stanzaID: stanzaID, reason: "spam"))))
        XCTAssertEqual(answer.type, .result, "\(answer.error.map(String.init(describing:)) ?? "")")
        let announcement = try await juliet.nextMessage(within: 10, "the moderation announcement") {
            $0.from == room && $0.extensionElement("apply-to", namespace: RichWire.fasten) != nil
        }
        let applyTo = try XCTUnwrap(announcement.extensionElement("apply-to", namespace: RichWire.fasten))
        XCTAssertEqual(applyTo[attribute: "id"], stanzaID)
        let moderated = try XCTUnwrap(applyTo.child("moderated", namespace: RichWire.moderate0))
        XCTAssertEqual(moderated[attribute: "by"], room.with(resource: "Romeo")!.description)
        XCTAssertNotNil(moderated.child("retract", namespace: RichWire.retract0))
        XCTAssertEqual(moderated.child("reason", namespace: RichWire.moderate0)?.text, "spam")
    }
}
