import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMLStream
import XMPP

/// MUC private messages ↔ Matrix DM rooms (issue 14 item 8, RICH.md §12) through real servers.
final class PrivateMessageTests: XCTestCase {
    func testPrivateMessagesBothWaysOnceInOneDMRoomThatFollowsNickChanges() async throws {
        let world = try EndToEndHarness("pm")
        try await world.startBridge()
        defer { world.stopBridge() }
        let scene = try await Scene(world, muc: "pm", account: "bob", nick: "Romeo")
        let (alice, muc, romeo, room, aliceOccupant, ghost) = (scene.alice, scene.muc, scene.occupant, scene.room, scene.aliceOccupant, scene.ghost)

        // XMPP → Matrix: a DM room created by Romeo's ghost, direct, alice invited; the message in it once.
        try romeo.send(.message(Self.privateMessage(to: aliceOccupant, body: "psst, alice")))
        let invitation = try await eventuallyValue("alice invited to a DM", timeout: 30) {
            try await alice.invitations().first { $0.inviter == ghost }
        }
        XCTAssertTrue(invitation.isDirect, "the invite is marked is_direct")
        XCTAssertEqual(invitation.creator, ghost, "the ghost created the DM room")
        let dm = invitation.room
        XCTAssertNotEqual(dm, room)
        try await alice.join(dm)
        let first = try await world.matrixMessages(alice, in: dm, count: 1, excluding: alice.userID)
        XCTAssertEqual(first.map(\.body), ["psst, alice"])
        XCTAssertEqual(first.first?.sender, ghost)

        // Matrix → XMPP: alice's reply is a private message from her occupant to Romeo.
        try await alice.send("hello romeo", to: dm)
        let reply = try await romeo.nextMessage(within: 20, "alice's private reply") { $0.type == .chat && $0.body != nil }
        XCTAssertEqual(reply.body, "hello romeo")
        XCTAssertEqual(reply.from, aliceOccupant)

        // Romeo changes nick: the same ghost, the same DM room, and alice's next reply reaches him under the new nick
        // (sent to the old nick it would bounce: the room no longer knows it).
        try romeo.send(.presence(Presence(to: muc.with(resource: "Romeo2")!)))
        try await eventually("ghost renamed") { try await alice.members(of: room)[ghost] == "Romeo2" }
        try romeo.send(.message(Self.privateMessage(to: aliceOccupant, body: "/me is Romeo2 now")))
        let second = try await world.matrixMessages(alice, in: dm, count: 2, excluding: alice.userID)
        XCTAssertEqual(second.map(\.body), ["psst, alice", "is Romeo2 now"], "the second PM reuses the DM room")
        XCTAssertEqual(second.last?.msgtype, "m.emote")
        try await alice.send("still here", to: dm)
        let afterRename = try await romeo.nextMessage(within: 20, "alice's reply after the nick change") { $0.type == .chat && $0.body != nil }
        XCTAssertEqual(afterRename.body, "still here")

        // Exactly once both ways: a sentinel each way arrives after anything doubled.
        try romeo.send(.message(Self.privateMessage(to: aliceOccupant, body: "sentinel from xmpp")))
        let all = try await world.matrixMessages(alice, in: dm, untilBody: "sentinel from xmpp", excluding: alice.userID)
        XCTAssertEqual(all.map(\.body), ["psst, alice", "is Romeo2 now", "sentinel from xmpp"])
        try await alice.send("sentinel from matrix", to: dm)
        let sentinel = try await romeo.nextMessage(within: 20, "the Matrix sentinel") { $0.type == .chat && $0.body != nil }
        XCTAssertEqual(sentinel.body, "sentinel from matrix", "a private message arrived twice")
        let invites = try await alice.invitations().filter { $0.inviter == ghost }
        XCTAssertTrue(invites.isEmpty, "no second DM room: \(invites.map(\.room))")

        // Romeo leaves the MUC: alice's next message gets a notice back, not silence.
        try romeo.send(.presence(Presence(type: .unavailable, to: muc.with(resource: "Romeo2")!)))
        try await eventually("ghost left the linked room") { try await alice.members(of: room)[ghost] == nil }
        try await alice.send("are you there?", to: dm)
        let notice = try await eventuallyValue("a notice in the DM", timeout: 20) {
            try await alice.messages(in: dm).first { $0.msgtype == "m.notice" }
        }
        XCTAssertEqual(notice.sender, ghost)
        XCTAssertEqual(notice.body, "⚠️ Romeo2 is not in the XMPP room any more; the message was not delivered.")
        romeo.close()
    }

    /// RICH.md §12 "Matrix-initiated": alice starts the DM from her client by inviting Romeo's ghost.
    func testAMatrixUserStartsADMByInvitingTheGhost() async throws {
        let files = try MediaTests.FileServer(files: ["/upload/pm/photo.png": ("image/png", MediaTests.png)])
        let world = try EndToEndHarness("pm-start")
        try world.editConfig(MediaTests.allowPrivate)
        try await world.startBridge()
        defer { world.stopBridge() }
        let scene = try await Scene(world, muc: "pmstart", account: "bob", nick: "Romeo")
        let (alice, _, romeo, _, aliceOccupant, ghost) = (scene.alice, scene.muc, scene.occupant, scene.room, scene.aliceOccupant, scene.ghost)

        let dm = try await alice.createDirectRoom(inviting: ghost)
        try await eventually("the ghost joined alice's DM", timeout: 30) { try await alice.members(of: dm)[ghost] != nil }
        try await alice.send("hello romeo", to: dm)
        let message = try await romeo.nextMessage(within: 20, "alice's private message") { $0.type == .chat && $0.body != nil }
        XCTAssertEqual(message.body, "hello romeo")
        XCTAssertEqual(message.from, aliceOccupant)

        // Romeo answers: in the room alice started, not in one the ghost creates.
        try romeo.send(.message(Self.privateMessage(to: aliceOccupant, body: "hi alice")))
        let answer = try await world.matrixMessages(alice, in: dm, count: 1, excluding: alice.userID)
        XCTAssertEqual(answer.map(\.body), ["hi alice"])
        XCTAssertEqual(answer.first?.sender, ghost)
        let invites = try await alice.invitations().filter { $0.inviter == ghost }
        XCTAssertTrue(invites.isEmpty, "no DM room of the ghost's: \(invites.map(\.room))")

        // A file in the DM: the bridge's link as the private message's body (with OOB), the caption right behind it;
        // the link serves the same bytes.
        try await alice.sendFile(MediaTests.png, msgtype: "m.image", contentType: "image/png", fileName: "dm.png",
                                 body: "just for you", to: dm)
        let file = try await romeo.nextMessage(within: 20, "alice's private file") { $0.type == .chat && $0.body != nil }
        let url = try XCTUnwrap(file.body)
        XCTAssertTrue(url.contains("/media/") && url.hasSuffix("/dm.png"), url)
        XCTAssertEqual(file.extensionElement("x", namespace: "jabber:x:oob")?.child("url", namespace: "jabber:x:oob")?.text, url)
        let caption = try await romeo.nextMessage(within: 20, "the file's caption") { $0.type == .chat && $0.body != nil }
        XCTAssertEqual(caption.body, "just for you")
        XCTAssertEqual(caption.from, aliceOccupant)
        let fetched = try await TestHTTP.get(url)
        XCTAssertEqual(fetched.status, 200)
        XCTAssertEqual(fetched.body, MediaTests.png, "the image is byte-identical")

        // And Romeo's file (Conversations' form: the URL as body, with OOB) arrives as an image in the DM.
        let photoURL = files.url("/upload/pm/photo.png")
        var shared = Self.privateMessage(to: aliceOccupant, body: photoURL)
        shared.extensions.append(MediaTests.oob(photoURL))
        try romeo.send(.message(shared))
        let image = try await eventuallyValue("Romeo's image in the DM", timeout: 30) {
            try await alice.messages(in: dm).first { $0.sender == ghost && $0.msgtype == "m.image" }
        }
        XCTAssertEqual(image.body, "photo.png")
        let mxc = try XCTUnwrap(image.raw.at("content", "url")?.stringValue)
        let downloaded = try await alice.download(mxc).data
        XCTAssertEqual(downloaded, MediaTests.png, "the image is byte-identical")
        romeo.close()
        await files.stop()
    }

    func testTheDMIsCreatedAgainAfterTheMatrixUserLeftIt() async throws {
        let world = try EndToEndHarness("pm-left")
        try await world.startBridge()
        defer { world.stopBridge() }
        let scene = try await Scene(world, muc: "pmleft", account: "carol", nick: "Juliet")
        let (alice, _, juliet, _, aliceOccupant, ghost) = (scene.alice, scene.muc, scene.occupant, scene.room, scene.aliceOccupant, scene.ghost)

        try juliet.send(.message(Self.privateMessage(to: aliceOccupant, body: "first")))
        let first = try await eventuallyValue("the first DM invite", timeout: 30) {
            try await alice.invitations().first { $0.inviter == ghost }
        }
        try await alice.join(first.room)
        _ = try await world.matrixMessages(alice, in: first.room, count: 1, excluding: alice.userID)
        // She leaves; the next PM opens a new DM (whether the bridge has seen the leave yet or asks the homeserver).
        try await alice.leave(first.room)

        try juliet.send(.message(Self.privateMessage(to: aliceOccupant, body: "second")))
        let again = try await eventuallyValue("a new DM invite", timeout: 30) {
            try await alice.invitations().first { $0.inviter == ghost && $0.room != first.room }
        }
        XCTAssertTrue(again.isDirect)
        try await alice.join(again.room)
        let messages = try await world.matrixMessages(alice, in: again.room, count: 1, excluding: alice.userID)
        XCTAssertEqual(messages.map(\.body), ["second"])
        juliet.close()
    }

    func testAPrivateMessageTheMUCBouncesBecomesANoticeInTheDM() async throws {
        let world = try EndToEndHarness("pm-bounce")
        try await world.startBridge()
        defer { world.stopBridge() }
        let scene = try await Scene(world, muc: "pmbounce", account: "bob", nick: "Owner")   // bob creates the room and owns it
        let (alice, muc, owner, _, aliceOccupant, ghost) = (scene.alice, scene.muc, scene.occupant, scene.room, scene.aliceOccupant, scene.ghost)
        try owner.send(.message(Self.privateMessage(to: aliceOccupant, body: "hi")))
        let invitation = try await eventuallyValue("the DM invite", timeout: 30) {
            try await alice.invitations().first { $0.inviter == ghost }
        }
        try await alice.join(invitation.room)

        // The owner kicks alice's occupant (XEP-0045 §8.2): her private messages are no longer accepted by the room
        // (she is not an occupant), and the room's error reply is the one the DM hears about.
        _ = try await owner.request(IQ(type: .set, to: muc, payload: .other(RichWire.roleChange(nick: "alice", role: "none"))))
        _ = try await owner.nextPresence(within: 20, "alice's occupant kicked") {
            $0.from == aliceOccupant && $0.statusCodes.contains(.kicked)
        }
        try await alice.send("can you hear me?", to: invitation.room)
        let notice = try await eventuallyValue("a notice in the DM", timeout: 30) {
            try await alice.messages(in: invitation.room).first { $0.msgtype == "m.notice" }
        }
        XCTAssertEqual(notice.sender, ghost)
        XCTAssertTrue(notice.body?.hasPrefix("⚠️ Your message could not be delivered to Owner (") == true, notice.description)
        owner.close()
    }

    func testTheDMSurvivesARestartAndWhatAliceSentMeanwhileGoesOutOnce() async throws {
        let world = try EndToEndHarness("pm-restart")
        try await world.startBridge()
        let scene = try await Scene(world, muc: "pmrestart", account: "bob", nick: "Romeo")
        let (alice, muc, romeo, _, aliceOccupant, ghost) = (scene.alice, scene.muc, scene.occupant, scene.room, scene.aliceOccupant, scene.ghost)
        try romeo.send(.message(Self.privateMessage(to: aliceOccupant, body: "before")))
        let invitation = try await eventuallyValue("the DM invite", timeout: 30) {
            try await alice.invitations().first { $0.inviter == ghost }
        }
        try await alice.join(invitation.room)
        _ = try await world.matrixMessages(alice, in: invitation.room, count: 1, excluding: alice.userID)

        // Down: alice writes, and the owner kicks her occupant (XEP-0045 §8.2). Up again: the message goes out once her
        // occupant is back in the MUC (not before: the room would refuse a private message from a non-occupant).
        world.stopBridge()
        try await alice.send("while you were away", to: invitation.room)
        _ = try await romeo.request(IQ(type: .set, to: muc, payload: .other(RichWire.roleChange(nick: "alice", role: "none"))))
        _ = try await romeo.nextPresence(within: 20, "alice's occupant kicked") {
            $0.from == aliceOccupant && $0.statusCodes.contains(.kicked)
        }
        try await world.startBridge()
        defer { world.stopBridge() }
        let late = try await romeo.nextMessage(within: 30, "alice's message from the downtime") { $0.type == .chat && $0.body != nil }
        XCTAssertEqual(late.body, "while you were away")
        XCTAssertEqual(late.from, aliceOccupant)
        try await alice.send("sentinel", to: invitation.room)
        let next = try await romeo.nextMessage(within: 20, "the sentinel") { $0.type == .chat && $0.body != nil }
        XCTAssertEqual(next.body, "sentinel", "the downtime message arrived twice")
        // The same DM room after the restart.
        try romeo.send(.message(Self.privateMessage(to: aliceOccupant, body: "after")))
        let messages = try await world.matrixMessages(alice, in: invitation.room, count: 2, excluding: alice.userID)
        XCTAssertEqual(messages.map(\.body), ["before", "after"])
        let notices = try await alice.messages(in: invitation.room).filter { $0.msgtype == "m.notice" }
        XCTAssertEqual(notices.map(\.description), [], "nothing bounced")
        romeo.close()
    }

    /// A linked room with alice's occupant and one XMPP user's occupant in it (who joined first: the room's owner),
    /// and that occupant's ghost as alice sees it in the linked room.
    struct Scene {
        let alice: MatrixTestUser
        let muc: JID
        let occupant: XMPPTestClient
        let room: String
        let aliceOccupant: JID
        let ghost: String

        init(_ world: EndToEndHarness, muc name: String, account: String, nick: String) async throws {
            alice = try await world.matrixUser("alice")
            muc = world.muc(name)
            occupant = try await world.xmppUser(account)
            try await occupant.joinRoom(muc, nick: nick)
            let (alice, muc) = (alice, muc)
            room = try await world.linkedRoom(owner: alice, muc: muc)
            let aliceOccupant = muc.with(resource: "alice")!
            self.aliceOccupant = aliceOccupant
            _ = try await occupant.nextPresence(within: 20, "alice's occupant") { $0.from == aliceOccupant && $0.type == .available }
            let room = room
            ghost = try await eventuallyValue("\(nick)'s ghost in the linked room") {
                try await alice.members(of: room).first(where: { $0.value == nick })?.key
            }
        }
    }

    /// A MUC private message (XEP-0045 §7.5) to `occupant`.
    static func privateMessage(to occupant: JID, body: String) -> Message {
        Message(type: .chat, to: occupant, id: StanzaAttributeID(UUID().uuidString), body: body,
                extensions: [XElement("x", namespace: XMPPNamespace.mucUser)])
    }
}
