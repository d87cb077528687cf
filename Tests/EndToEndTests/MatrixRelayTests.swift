import Foundation
import IsthmusCommon
import Synchronization
import TestSupport
import XCTest
import XMPP

/// Matrix client mode (`matrix.mode: client`): the bridge as the ordinary Matrix account `@relay:localhost` on the
/// real Synapse — no application service — syncing, and speaking for the XMPP occupants with per-message profiles; the
/// XMPP side stays the component, every Matrix user an occupant of their own.
final class MatrixRelayTests: XCTestCase {
    static let account = "@relay:localhost"

    /// The scenario's config turned to Matrix client mode: the account and its password instead of the appservice.
    static func matrixClientConfig(_ bed: TestBed) -> (String) -> String {
        { text in
            var text = text
            let start = text.range(of: "appservice:\n")!
            var end = start.upperBound
            while end < text.endIndex, text[end] == " " || text[end] == "\n" {
                end = text[end...].firstIndex(of: "\n").map { text.index(after: $0) } ?? text.endIndex
            }
            text.removeSubrange(start.lowerBound..<end)
            let serverName = text.range(of: "  server_name: localhost\n")!
            text.insert(contentsOf: """
                  mode: client
                  client:
                    user_id: "\(account)"
                    password: "\(bed.password)"

                """, at: serverName.upperBound)
            return text
        }
    }

    /// The bridge running as the account, alice in a room linked with Romeo's MUC.
    static func linkedPair(_ scenario: String) async throws
        -> (world: EndToEndHarness, alice: MatrixTestUser, muc: JID, romeo: XMPPTestClient, room: String) {
        let world = try EndToEndHarness(scenario)
        try world.editConfig(matrixClientConfig(world.bed))
        try await world.startBridge()
        let alice = try await world.matrixUser("alice")
        let muc = world.muc(scenario)
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let alias = "room-\(world.suffix)-\(scenario)"
        let room = try await alice.createRoom(aliasLocalpart: alias, invite: [account])
        let linked = try world.cli("link", "#\(alias):localhost", muc.description)
        XCTAssertEqual(linked.status, 0, linked.stderr)
        try await world.waitForLink(room, status: "active", timeout: 30)
        return (world, alice, muc, romeo, room)
    }

    /// kill -9 and a restart with messages sent both ways while the bridge was down, then the same across SIGTERM: the
    /// stored sync position brings every Matrix message once (nothing older again), the archive every XMPP one, in order.
    func testAKillNineAndARestartLoseAndRepeatNothing() async throws {
        let (world, alice, muc, romeo, room) = try await Self.linkedPair("mrelay-kill")
        defer { romeo.close() }
        try await alice.send("before", to: room)
        _ = try await world.xmppMessages(romeo, from: muc, untilBody: "before", excludingNick: "Romeo")
        world.crashBridge()
        for index in 0..<4 {
            try await alice.send("m\(index)", to: room)
            try romeo.sendGroupchat(to: muc, body: "x\(index)")
        }
        try await world.startBridge()
        defer { world.stopBridge() }
        try await alice.send("m-end", to: room)
        try romeo.sendGroupchat(to: muc, body: "x-end")
        let inXMPP = try await world.xmppMessages(romeo, from: muc, untilBody: "m-end", excludingNick: "Romeo", timeout: 60)
        XCTAssertEqual(inXMPP.map(\.body), (0..<4).map { "m\($0)" } + ["m-end"], "once each, nothing older again")
        let inMatrix = try await world.matrixMessages(alice, in: room, untilBody: "Romeo: x-end", excluding: alice.userID, timeout: 60)
        XCTAssertEqual(inMatrix.map(\.body), (0..<4).map { "Romeo: x\($0)" } + ["Romeo: x-end"])
        XCTAssertTrue(world.bridge?.log.contains("matrix.sync.resumed=true") == true, "the restart synced on from the stored position")

        // The same across a graceful stop (SIGTERM).
        world.stopBridge()
        for index in 0..<3 {
            try await alice.send("t\(index)", to: room)
            try romeo.sendGroupchat(to: muc, body: "y\(index)")
        }
        try await world.startBridge()
        try await alice.send("t-end", to: room)
        try romeo.sendGroupchat(to: muc, body: "y-end")
        let afterStop = try await world.xmppMessages(romeo, from: muc, untilBody: "t-end", excludingNick: "Romeo", timeout: 60)
        XCTAssertEqual(afterStop.map(\.body), (0..<3).map { "t\($0)" } + ["t-end"], "once each, nothing older again")
        let intoMatrix = try await world.matrixMessages(alice, in: room, untilBody: "Romeo: y-end", excluding: alice.userID, timeout: 60)
        XCTAssertEqual(intoMatrix.map(\.body).drop { $0 != "Romeo: y0" }, (0..<3).map { "Romeo: y\($0)" } + ["Romeo: y-end"])
        XCTAssertEqual(intoMatrix.map(\.body).filter { $0 == "Romeo: x-end" }.count, 1, "nothing of the earlier run again")
    }

    func testTextBothWaysThroughTheAccountWithProfiles() async throws {
        let world = try EndToEndHarness("mrelay")
        try world.editConfig(Self.matrixClientConfig(world.bed))
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("mrelay")
        let romeo = try await world.xmppUser("bob")
        defer { romeo.close() }
        try await romeo.joinRoom(muc, nick: "Romeo")
        let alias = "room-\(world.suffix)-mrelay"
        let room = try await alice.createRoom(aliasLocalpart: alias, invite: [Self.account])
        let linked = try world.cli("link", "#\(alias):localhost", muc.description)
        XCTAssertEqual(linked.status, 0, linked.stderr)
        try await world.waitForLink(room, status: "active", timeout: 30)

        // XMPP → Matrix: from the account, naming Romeo in the profile and in the fallback; never as a ghost user.
        try romeo.sendGroupchat(to: muc, body: "hello from xmpp")
        let fromXMPP = try await eventuallyValue("Romeo's message in the room", timeout: 30) {
            try await alice.messages(in: room).first { $0.body?.hasSuffix("hello from xmpp") == true }
        }
        XCTAssertEqual(fromXMPP.sender, Self.account)
        XCTAssertEqual(fromXMPP.body, "Romeo: hello from xmpp")
        XCTAssertEqual(fromXMPP.raw.at("content", "com.beeper.per_message_profile", "displayname")?.stringValue, "Romeo")
        XCTAssertNotNil(fromXMPP.raw.at("content", "com.beeper.per_message_profile", "id")?.stringValue)
        XCTAssertEqual(fromXMPP.raw.at("content", "formatted_body")?.stringValue,
                       "<strong data-mx-profile-fallback>Romeo: </strong>hello from xmpp")

        // Matrix → XMPP: alice's puppet says it (the component side is unchanged); the account's own messages never go back.
        try await alice.send("hello from matrix", to: room)
        let inXMPP = try await world.xmppMessages(romeo, from: muc, untilBody: "hello from matrix", excludingNick: "Romeo")
        XCTAssertEqual(inXMPP.map(\.body), ["hello from matrix"], "nothing of the account's echoed back")
        let members = try await alice.members(of: room)
        XCTAssertFalse(members.keys.contains { $0.hasPrefix("@_xmpp_") }, "no ghost users joined: \(members.keys)")
    }

    /// Access tokens that expire every 10 s on the bed (`refreshable_access_token_lifetime`) under two-way traffic for
    /// three lifetimes: the account refreshes as it goes, and every message crosses once, in order.
    func testTrafficAcrossSeveralTokenLifetimesLosesNothing() async throws {
        let (world, alice, muc, romeo, room) = try await Self.linkedPair("mrelay-refresh")
        defer { world.stopBridge() }
        defer { romeo.close() }
        let started = ContinuousClock.now
        var sent = 0
        while ContinuousClock.now - started < .seconds(32) {
            try await alice.send("m\(sent)", to: room)
            try romeo.sendGroupchat(to: muc, body: "x\(sent)")
            sent += 1
            try await Task.sleep(for: .milliseconds(700))   // pacing the senders, not waiting for a result
        }
        try await alice.send("m-end", to: room)
        try romeo.sendGroupchat(to: muc, body: "x-end")
        let inXMPP = try await world.xmppMessages(romeo, from: muc, untilBody: "m-end", excludingNick: "Romeo", timeout: 60)
        XCTAssertEqual(inXMPP.map(\.body), (0..<sent).map { "m\($0)" } + ["m-end"])
        let inMatrix = try await world.matrixMessages(alice, in: room, untilBody: "Romeo: x-end", excluding: alice.userID, timeout: 60)
        XCTAssertEqual(inMatrix.map(\.body), (0..<sent).map { "Romeo: x\($0)" } + ["Romeo: x-end"])
        XCTAssertFalse(world.bridge?.log.contains("Matrix sync failed") == true, "no sync failed over the refreshes")
        let scrape = try await MetricsScrape.fetch(port: world.bed.metricsPort)
        XCTAssertGreaterThanOrEqual(scrape["isthmus_matrix_session_events_total{event=\"refreshed\"}"], 2, scrape.text)
        XCTAssertEqual(scrape["isthmus_matrix_session_events_total{event=\"logged_in\"}"], 1, "logged in once, by itself")
        XCTAssertEqual(scrape["isthmus_matrix_session_events_total{event=\"stalled\"}"], 0)
    }

    /// No admin rights anywhere: the bridge as the XMPP account relay@localhost and the Matrix account @relay:localhost
    /// at once — each side's people through the other side's one account, once each, and across a kill -9.
    func testBothRelaysAtOnce() async throws {
        let world = try EndToEndHarness("both-relays")
        try world.editConfig(RelayTests.clientModeConfig(world.bed))
        try world.editConfig(Self.matrixClientConfig(world.bed))
        try await world.startBridge()
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("both-relays")
        let romeo = try await world.xmppUser("bob")
        defer { romeo.close() }
        try await romeo.joinRoom(muc, nick: "Romeo")
        let alias = "room-\(world.suffix)-both"
        let room = try await alice.createRoom(aliasLocalpart: alias, invite: [Self.account])
        XCTAssertEqual(try world.cli("link", "#\(alias):localhost", muc.description).status, 0)
        try await world.waitForLink(room, status: "active", timeout: 30)
        try await alice.setDisplayname("Alice", in: room)
        try await alice.send("hi from matrix", to: room)
        try romeo.sendGroupchat(to: muc, body: "hi from xmpp")
        _ = try await world.xmppMessages(romeo, from: muc, untilBody: "<Alice> hi from matrix", excludingNick: "Romeo")
        world.crashBridge()
        try await alice.send("while down", to: room)
        try romeo.sendGroupchat(to: muc, body: "also while down")
        try await world.startBridge()
        defer { world.stopBridge() }
        try await alice.send("end", to: room)
        try romeo.sendGroupchat(to: muc, body: "xmpp end")
        let inXMPP = try await world.xmppMessages(romeo, from: muc, untilBody: "<Alice> end", excludingNick: "Romeo", timeout: 60)
        XCTAssertEqual(inXMPP.map(\.body), ["<Alice> while down", "<Alice> end"], "after the first, read before the kill")
        let inMatrix = try await world.matrixMessages(alice, in: room, untilBody: "Romeo: xmpp end", excluding: alice.userID, timeout: 60)
        XCTAssertEqual(inMatrix.map(\.body), ["Romeo: hi from xmpp", "Romeo: also while down", "Romeo: xmpp end"])
        XCTAssertEqual(RelayTests.relayLeft(romeo, muc), [], "the XMPP relay never left the room")
    }

    /// What an XMPP occupant does to its messages is the account's to do: a correction is the account's `m.replace`
    /// (with the profile), a reaction the account's, a retraction its redaction; a reply answers alice's event.
    func testCorrectionsReactionsRetractionsAndRepliesGoAsTheAccounts() async throws {
        let pair = try await RichPair.start("mrelay-rich", config: Self.matrixClientConfig(try TestBed.fromEnvironment()))
        defer { pair.close() }
        let original = try await pair.xmppSays("tpyo", matching: { $0.body == "Romeo: tpyo" })
        XCTAssertEqual(original.event.sender, Self.account)
        let originalID = try XCTUnwrap(original.reflected.id?.rawValue)
        _ = try await pair.xmppSays("typo", extensions: [RichWire.replaceElement(id: originalID)]) { $0.relatedEventID == original.event.eventID }
        let edit = try await pair.matrixEvent("the edit") { $0.relationType == "m.replace" }
        XCTAssertEqual(edit.sender, Self.account)
        XCTAssertEqual(edit.raw.at("content", "m.new_content", "body")?.stringValue, "Romeo: typo")
        XCTAssertEqual(edit.raw.at("content", "com.beeper.per_message_profile", "displayname")?.stringValue, "Romeo")

        let fromAlice = try await pair.alice.send("a question", to: pair.room)
        let question = try await pair.fromPuppet("alice's question") { $0.body == "a question" }
        let stanzaID = try pair.stanzaID(of: question)
        _ = try await pair.xmppSays(nil, extensions: RichWire.reactionElements(id: stanzaID, ["👍"]),
                                    matching: { $0.type == "m.reaction" && $0.relatedEventID == fromAlice })
        let reaction = try await pair.matrixEvent("the reaction") { $0.type == "m.reaction" }
        XCTAssertEqual(reaction.sender, Self.account)
        XCTAssertEqual(reaction.reactionKey, "👍")

        _ = try await pair.xmppSays("an answer", extensions: [RichWire.replyElement(to: pair.muc.with(resource: RichPair.puppetNick)!, id: stanzaID)],
                                    matching: { $0.body?.hasSuffix("an answer") == true })
        let answer = try await pair.matrixEvent("the answer") { $0.body?.hasSuffix("an answer") == true }
        XCTAssertEqual(answer.raw.at("content", "m.relates_to", "m.in_reply_to", "event_id")?.stringValue, fromAlice)

        let retracted = try await pair.romeo.sendAndReflect(to: pair.muc, body: RichWire.retractionFallbackBody,
                                                            extensions: RichWire.retractElements(stanzaID: try pair.stanzaID(of: original.reflected)))
        XCTAssertNotNil(retracted.id)
        let redaction = try await pair.redaction(of: original.event.eventID)
        XCTAssertEqual(redaction.at("sender")?.stringValue, Self.account)
    }
    /// Files through the account: an XMPP file is fetched and uploaded by the account (its session's token), and sent
    /// as a media message with the occupant's profile; a Matrix file, fetched with the account's token, goes to XMPP
    /// through the XMPP server's upload service (client mode has no listener to serve files from).
    func testFilesCrossAsTheAccountAndThroughTheXMPPUploadService() async throws {
        let files = try MediaTests.FileServer(files: ["/upload/abc/photo.png": ("image/png", MediaTests.png)])
        let bed = try TestBed.fromEnvironment()
        let pair = try await RichPair.start("mrelay-files", config: {
            Self.matrixClientConfig(bed)($0) + "\nmedia:\n  allow_private_addresses: true\n  xmpp_upload: true\n"
        })
        defer { pair.close() }
        let photoURL = files.url("/upload/abc/photo.png")
        let image = try await pair.xmppSays(photoURL, extensions: [MediaTests.oob(photoURL)]) { $0.msgtype == "m.image" }.event
        XCTAssertEqual(image.sender, Self.account, "uploaded and sent by the account")
        XCTAssertEqual(image.body, "photo.png")
        XCTAssertEqual(image.raw.at("content", "com.beeper.per_message_profile", "displayname")?.stringValue, "Romeo")
        let mxc = try XCTUnwrap(image.raw.at("content", "url")?.stringValue)
        let downloaded = try await pair.alice.download(mxc).data
        XCTAssertEqual(downloaded, MediaTests.png, "the image is byte-identical")
        await files.stop()

        let shot = MediaTests.pattern(100_000, seed: 4144)
        try await pair.alice.sendFile(shot, msgtype: "m.image", contentType: "image/png", fileName: "shot.png",
                                      info: ["w": 1, "h": 1], to: pair.room)
        let message = try await pair.fromPuppet("the uploaded image") { $0.body?.hasPrefix("http") == true }
        let url = try XCTUnwrap(message.body)
        XCTAssertTrue(url.contains("/file_share/") || url.contains("/upload/"), "a URL of the upload service: \(url)")
        let fetched = try await TestHTTP.get(url)
        XCTAssertEqual(fetched.status, 200)
        XCTAssertEqual(fetched.body, shot, "the upload service serves the identical bytes")
        let late = try await pair.puppetMessages(untilSentinel: "files sentinel")
        XCTAssertEqual(late.map(\.body), ["files sentinel"], "nothing doubled")
    }
    /// A moderator kicks the account: what XMPP occupants say meanwhile waits (nothing is dropped for want of the
    /// account), and once someone invites it again it joins by itself and brings it all, once and in order.
    func testAKickedAccountHoldsTheRoomsMessagesUntilItIsInvitedBack() async throws {
        let (world, alice, muc, romeo, room) = try await Self.linkedPair("mrelay-kick")
        defer { world.stopBridge() }
        defer { romeo.close() }
        try romeo.sendGroupchat(to: muc, body: "before")
        _ = try await world.matrixMessages(alice, in: room, untilBody: "Romeo: before", excluding: alice.userID, timeout: 30)
        try await alice.kick(Self.account, from: room, reason: "go away")
        try await eventually("the bridge saw it was removed", timeout: 30) {
            world.bridge?.log.contains("The bridge's Matrix account left a room or was removed from it") == true
        }
        // A restart names the linked room the account is not in.
        world.stopBridge()
        try await world.startBridge()
        try await eventually("the start names the room", timeout: 30) {
            world.bridge?.log.contains("The bridge's Matrix account is not in a linked room") == true
                && world.bridge?.log.contains(room) == true
        }
        for index in 0..<3 { try romeo.sendGroupchat(to: muc, body: "held\(index)") }
        try await eventually("a held message waits for the account", timeout: 30) {
            world.bridge?.log.contains("is not in the room: messages wait until someone invites it again") == true
        }
        try await alice.invite(Self.account, to: room)
        try romeo.sendGroupchat(to: muc, body: "after")
        let inMatrix = try await world.matrixMessages(alice, in: room, untilBody: "Romeo: after", excluding: alice.userID, timeout: 90)
        XCTAssertEqual(inMatrix.map(\.body), ["Romeo: before", "Romeo: held0", "Romeo: held1", "Romeo: held2", "Romeo: after"])
    }
    /// Self-service linking through the account: invited into a room no link names, it joins; `!isthmus link` there
    /// asks the MUC's owner, whose `yes` links; the account posts the confirmation and relays; `unlink` ends it.
    func testSelfServiceLinkingThroughTheAccount() async throws {
        let world = try EndToEndHarness("mrelay-self")
        try world.editConfig(Self.matrixClientConfig(world.bed))
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let muc = world.muc("mrelay-self")
        let romeo = try await world.xmppUser("bob")
        defer { romeo.close() }
        try await romeo.joinRoom(muc, nick: "Romeo")   // creates the room: Romeo is its owner
        let room = try await alice.createRoom(name: "Lounge \(world.suffix)", invite: [Self.account])
        try await world.waitForBot(alice, in: room)

        try await alice.send("!isthmus link \(muc) Romeo", to: room)
        let question = try await world.privateMessage(to: romeo, from: muc)
        XCTAssertTrue(question.body?.contains("Reply yes within 5 minutes") == true, question.body ?? "")
        try romeo.send(.message(Message(type: .chat, to: try XCTUnwrap(question.from), body: "yes")))
        _ = try await world.botNotice(alice, in: room, containing: "Linked with \(muc), allowed by Romeo.")
        try await world.waitForLink(room, status: "active")

        try romeo.sendGroupchat(to: muc, body: "hello from xmpp")
        let bridged = try await world.matrixMessages(alice, in: room, untilBody: "Romeo: hello from xmpp", excluding: alice.userID)
        XCTAssertEqual(bridged.last?.sender, Self.account)
        try await alice.send("!isthmus unlink", to: room)
        try await eventually("link gone", timeout: 20) { try world.links().isEmpty }
    }
    /// Avatars through the account: an occupant's vCard photo is uploaded by the account and named in the profile of
    /// its messages (no member event: there is no such member); a Matrix user's avatar reaches its puppet's vCard.
    func testAnOccupantsAvatarIsInItsMessagesProfiles() async throws {
        let pair = try await RichPair.start("mrelay-avatar", config: Self.matrixClientConfig(try TestBed.fromEnvironment()))
        defer { pair.close() }
        _ = try await pair.xmppSays("before the avatar", matching: { $0.body == "Romeo: before the avatar" })
        try await AvatarTests.publishAvatar(pair.romeo, nick: "Romeo", in: pair.muc)
        // Each message until the upload is done may still go without; one soon carries it.
        let attempt = Mutex(0)
        let mxc = try await eventuallyValue("a message of Romeo's with the avatar in its profile", timeout: 30, pollEvery: .milliseconds(300)) {
            () -> String? in
            let number = attempt.withLock { $0 += 1; return $0 }
            let said = try await pair.xmppSays("try \(number)", matching: { $0.body == "Romeo: try \(number)" })
            return said.event.raw.at("content", "com.beeper.per_message_profile", "avatar_url")?.stringValue
        }
        XCTAssertTrue(mxc.hasPrefix("mxc://"), mxc)
        let downloaded = try await pair.alice.download(mxc)
        XCTAssertEqual(downloaded.data, AvatarTests.png, "the profile's avatar is byte-identical to the vCard's photo")
        let members = try await pair.alice.members(of: pair.room)
        XCTAssertFalse(members.keys.contains { $0.hasPrefix("@_xmpp_") }, "no ghost member for the avatar: \(members.keys)")
    }
}
