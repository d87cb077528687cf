import Foundation
import IsthmusCommon
import Matrix
import TestSupport
import XCTest
import XMLStream
import XMPP

/// Issue 14 items 1, 2 and 7 on the real test bed: the MUC subject ↔ the Matrix topic (with the wire elements each
/// side sees, and no loop), the MUC name → the Matrix name for `--sync-name` links, room upgrades (tombstones) and the
/// MUC's destruction.
final class RoomStateTests: XCTestCase {
    /// The bridge's own occupant's nick in the test bed's config.
    static let botNick = "Matrix"

    // MARK: Subject ↔ topic

    func testSubjectAndTopicCrossWithTheirWireElementsAndDoNotLoop() async throws {
        let pair = try await RichPair.start("subject")
        defer { pair.close() }
        try await pair.grantBotModeratorPower()

        // XMPP → Matrix: Romeo's subject becomes the topic, word for word; Romeo's ghost has no power for
        // m.room.topic, so the bot sets it and a separate notice names Romeo by his nick.
        try pair.romeo.send(.message(Message(type: .groupchat, to: pair.muc, subject: "Orchard at noon")))
        let topic = try await pair.matrixEvent("the topic from XMPP") { $0.type == "m.room.topic" && $0.content["topic"] == "Orchard at noon" }
        XCTAssertEqual(topic.sender, pair.world.botUserID)
        XCTAssertEqual(topic.raw.at("content", "m.topic", "m.text")?.arrayValue?.first?.at("body")?.stringValue, "Orchard at noon")
        let notice = try await pair.matrixEvent("who changed it") { $0.type == "m.room.message" && $0.content["msgtype"] == "m.notice" }
        XCTAssertEqual(notice.body, "Romeo changed the XMPP room's subject.")
        XCTAssertEqual(notice.sender, pair.world.botUserID)

        // Matrix → XMPP: Romeo makes alice's occupant a moderator; her topic change reaches him as a subject change
        // from her occupant: a groupchat <subject/> without a body.
        try await grantRole("moderator", to: RichPair.puppetNick, in: pair)
        try await pair.alice.setState("m.room.topic", content: ["topic": "Balcony at midnight"], in: pair.room)
        let subject = try await pair.fromPuppet("the subject change") { $0.subject != nil }
        XCTAssertEqual(subject.subject, "Balcony at midnight")
        XCTAssertNil(subject.body)
        XCTAssertEqual(subject.type, .groupchat)

        // No loop: the reflection of alice's change does not come back as another topic, nor Romeo's as another subject.
        let timeline = try await pair.timeline(untilXMPPSentinel: "subject sentinel")
        XCTAssertEqual(timeline.filter { $0.type == "m.room.topic" }.map { $0.content["topic"] },
                       ["Orchard at noon", "Balcony at midnight"])
        let late = try await pair.puppetMessages(untilSentinel: "topic sentinel")
        XCTAssertEqual(late.map(\.body), ["topic sentinel"], "a subject or message came back from alice's occupant")
        XCTAssertEqual(late.compactMap(\.subject), [])
    }

    func testAForbiddenTopicChangeIsTriedByTheBridgeThenExplained() async throws {
        let pair = try await RichPair.start("subjectrights")
        defer { pair.close() }
        try await pair.grantBotModeratorPower()
        // Only moderators may change the subject (Prosody's default; ejabberd's allows everyone).
        try await configure(pair, ["muc#roomconfig_changesubject": "0"])

        try await pair.alice.setState("m.room.topic", content: ["topic": "Nobody may"], in: pair.room)
        let notice = try await pair.matrixEvent("the refusal notice") { $0.type == "m.room.message" && $0.content["msgtype"] == "m.notice" }
        XCTAssertEqual(notice.body, "⚠️ Alice Liddell's topic change was not applied to the XMPP room (only its moderators may change the subject there).")

        // Romeo makes the bridge's occupant a moderator: the next change goes out from it when alice's is refused.
        try await grantRole("moderator", to: Self.botNick, in: pair)
        try await pair.alice.setState("m.room.topic", content: ["topic": "The bridge may"], in: pair.room)
        let subject = try await pair.romeo.nextMessage(within: 30, "the subject from the bridge's occupant") {
            $0.from == pair.muc.bare.with(resource: Self.botNick) && $0.subject != nil
        }
        XCTAssertEqual(subject.subject, "The bridge may")
        XCTAssertNil(subject.body)
        // The room then learns who changed it, by the nick alice has there (no Matrix id).
        let who = try await pair.romeo.nextMessage(within: 30, "who changed the subject") {
            $0.from == pair.muc.bare.with(resource: Self.botNick) && $0.body != nil
        }
        XCTAssertEqual(who.body, "Alice Liddell changed the subject.")
        // Neither subject came from alice's occupant, and the refused one never reached the room.
        let late = try await pair.puppetMessages(untilSentinel: "rights sentinel")
        XCTAssertEqual(late.map(\.body), ["rights sentinel"])
        XCTAssertFalse(pair.romeo.queuedStanzas.contains { stanza in
            if case .message(let message) = stanza { message.subject == "Nobody may" } else { false }
        })
    }

    func testTheSubjectSentOnJoinIsNotAppliedAgainAfterARestart() async throws {
        let pair = try await RichPair.start("subjectjoin")
        defer { pair.close() }
        try await pair.grantBotModeratorPower()
        try pair.romeo.send(.message(Message(type: .groupchat, to: pair.muc, subject: "Kept across restarts")))
        _ = try await pair.matrixEvent("the topic") { $0.type == "m.room.topic" && $0.content["topic"] == "Kept across restarts" }

        pair.world.stopBridge()
        try await pair.world.startBridge()
        // The bridge's occupant gets the subject again as it rejoins, before anything said after: once this
        // sentinel is in, the join subject was handled — and it set nothing.
        let timeline = try await pair.timeline(untilXMPPSentinel: "after the restart")
        XCTAssertEqual(timeline.filter { $0.type == "m.room.topic" }.count, 1, "the join subject was applied again")
        XCTAssertEqual(timeline.filter { $0.content["msgtype"] == "m.notice" }.count, 1, "a second notice about the subject")
    }

    // MARK: Name

    func testWithSyncNameTheMUCsNameBecomesTheRoomsName() async throws {
        let world = try EndToEndHarness("name")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let romeo = try await world.xmppUser("bob")
        defer { romeo.close() }
        let muc = world.muc("name")
        try await romeo.joinRoom(muc, nick: "Romeo")
        try await Self.ask(romeo, Self.configuration(of: muc, ["muc#roomconfig_roomname": "Verona"]))
        let room = try await alice.createRoom(name: "Matrix's own name", invite: [world.botUserID])
        try await alice.grantPower(50, to: world.botUserID, in: room)
        let result = try world.cli("link", "--sync-name", room, muc.description)
        XCTAssertEqual(result.status, 0, result.stderr)
        try await world.waitForLink(room, status: "active")
        try await eventually("the MUC's name in the Matrix room", timeout: 30) {
            try await alice.state("m.room.name", in: room)?["name"] as? String == "Verona"
        }
        // A renamed MUC (status 104) renames the Matrix room.
        try await Self.ask(romeo, Self.configuration(of: muc, ["muc#roomconfig_roomname": "Mantua"]))
        try await eventually("the new name in the Matrix room", timeout: 30) {
            try await alice.state("m.room.name", in: room)?["name"] as? String == "Mantua"
        }
    }

    // MARK: Upgrades

    func testAnUpgradedRoomIsFollowedAndBothSidesTalkInTheNewRoomOnce() async throws {
        let pair = try await RichPair.start("upgrade")
        defer { pair.close() }
        try await pair.grantBotModeratorPower()
        let before = try await pair.xmppSays("before the upgrade")
        let ghost = before.event.sender

        let new = try await pair.alice.upgradeRoom(pair.room)
        // The new room is invite-only, as the old one was: alice invites the bridge, as clients offer to.
        try await pair.alice.invite(pair.world.botUserID, to: new)
        try await pair.world.waitForLink(new, status: "active", timeout: 60)
        XCTAssertFalse(try pair.world.links().contains { $0["matrix_room"] == pair.room }, "the old room is still linked")
        try await pair.alice.setDisplayname(RichPair.puppetNick, in: new)
        // Romeo's ghost follows into the new room before anyone says anything.
        try await eventually("Romeo's ghost in the new room", timeout: 30) { try await pair.alice.members(of: new)[ghost] != nil }

        // XMPP → Matrix in the new room, by Romeo's ghost, once.
        try pair.romeo.sendGroupchat(to: pair.muc, body: "hello, new room")
        try pair.romeo.sendGroupchat(to: pair.muc, body: "xmpp upgrade sentinel")
        let inNew = try await pair.world.matrixMessages(pair.alice, in: new, untilBody: "xmpp upgrade sentinel", excluding: pair.alice.userID)
        XCTAssertEqual(inNew.map(\.body), ["hello, new room", "xmpp upgrade sentinel"])
        XCTAssertEqual(Set(inNew.map(\.sender)), [ghost])
        let oldRoom = try await pair.alice.messages(in: pair.room)
        XCTAssertFalse(oldRoom.contains { $0.body == "hello, new room" }, "the old room got a message after the move")

        // Matrix → XMPP from the new room, once.
        try await pair.alice.send("hello from the new room", to: new)
        try await pair.alice.send("matrix upgrade sentinel", to: new)
        var received: [String] = []
        while received.last != "matrix upgrade sentinel" {
            let message = try await pair.romeo.nextMessage(within: 30, "alice's messages from the new room") {
                $0.type == .groupchat && $0.from?.bare == pair.muc.bare && $0.from?.resource != "Romeo" && $0.body != nil
            }
            received.append(message.body ?? "")
        }
        XCTAssertEqual(received, ["hello from the new room", "matrix upgrade sentinel"])
        // The ghost and the bot left the old room.
        try await eventually("the bridge out of the old room", timeout: 30) {
            let members = try await pair.alice.members(of: pair.room)
            return members[ghost] == nil && members[pair.world.botUserID] == nil
        }
    }

    // MARK: Destruction

    func testADestroyedMUCPutsTheLinkInErrorAndTellsTheMatrixRoomWhereToGo() async throws {
        let pair = try await RichPair.start("destroy")
        defer { pair.close() }
        let venue = pair.world.muc("destroyed-venue")
        var destroy = XElement("destroy", namespace: "http://jabber.org/protocol/muc#owner", ["jid": venue.description])
        destroy.append(XElement("reason", namespace: "http://jabber.org/protocol/muc#owner", children: [.text("Moving house")]))
        var query = XElement("query", namespace: "http://jabber.org/protocol/muc#owner")
        query.append(destroy)
        try await Self.ask(pair.romeo, IQ(type: .set, to: pair.muc.bare, payload: .other(query)))

        try await pair.world.waitForLink(pair.room, status: "error", timeout: 30)
        let detail = try pair.world.links().first { $0["matrix_room"] == pair.room }?["detail"]
        XCTAssertEqual(detail, "the XMPP room was destroyed: Moving house; alternate venue xmpp:\(venue)?join")
        // The destruction notice by its text: a puppet whose join raced the destruction gets a notice of its own first
        // ("could not join the XMPP room (gone: …)"), more often when the store is slower (PostgreSQL under load).
        let notice = try await pair.matrixEvent("the destruction notice") {
            $0.type == "m.room.message" && $0.content["msgtype"] == "m.notice" && $0.body?.contains("was destroyed") == true
        }
        XCTAssertEqual(notice.body, "⚠️ The XMPP room was destroyed (reason: Moving house). This room is no longer bridged. "
                       + "The conversation continues at xmpp:\(venue)?join")
    }

    // MARK: Helpers

    /// Romeo (the MUC's owner) gives the occupant `nick` a role (XEP-0045 §8.4/§9.6), retried until that occupant is in.
    private func grantRole(_ role: String, to nick: String, in pair: RichPair) async throws {
        let item = XElement("item", namespace: "http://jabber.org/protocol/muc#admin", ["nick": nick, "role": role])
        var query = XElement("query", namespace: "http://jabber.org/protocol/muc#admin")
        query.append(item)
        try await eventually("\(nick) made \(role)", timeout: 30) {
            (try? await Self.ask(pair.romeo, IQ(type: .set, to: pair.muc.bare, payload: .other(query)))) != nil
        }
    }

    /// Romeo submits room configuration `fields` (XEP-0045 §10.2).
    private func configure(_ pair: RichPair, _ fields: [String: String]) async throws {
        try await Self.ask(pair.romeo, Self.configuration(of: pair.muc, fields))
    }

    /// `client` sends `iq` and gets a result; an error answer is thrown.
    @discardableResult
    static func ask(_ client: XMPPTestClient, _ iq: IQ) async throws -> IQ {
        let answer = try await client.request(iq)
        if let error = answer.error { throw error }
        return answer
    }

    /// A `muc#owner` configuration submission of `fields`.
    static func configuration(of muc: JID, _ fields: [String: String]) -> IQ {
        var form = DataForm(type: "submit", fields: [.init("FORM_TYPE", type: "hidden", values: ["http://jabber.org/protocol/muc#roomconfig"])])
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) { form.fields.append(.init(name, values: [value])) }
        return IQ(type: .set, to: muc.bare, payload: .mucOwner(form))
    }
}
