@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing
import TestSupport

/// MUC private messages ↔ Matrix DM rooms through the whole bridge against scripted fakes of both sides.
@Suite struct DirectChatsTests {
    let room = RoomID("!room:localhost")!
    let muc = JID("lounge@conference.localhost")!
    let alice = UserID("@alice:localhost")!
    let romeoJID = JID("romeo@localhost")!
    let naming = BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!

    /// A linked room with alice's occupant and Romeo (real JID visible) in the MUC; returns Romeo's ghost.
    func setUp(_ harness: BridgeHarness) async throws -> UserID {
        harness.matrix.state.withLock { $0.members[room] = [alice: "Alice"] }
        try await harness.store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc))
        harness.xmpp.feed.yield(.connected(reconnected: false))
        try await eventually("link active") { try await harness.store.roomLinks().first?.status == .active }
        harness.xmpp.feed.yield(.presence(RoomPresence(room: muc, nick: "Romeo", to: FakeXMPPLink.bot, available: true, realJID: romeoJID)))
        return try await eventuallyValue("Romeo's ghost saved") {
            try await harness.store.roomGhosts(room).first { $0.nick == "Romeo" && $0.joined }?.user
        }
    }

    func privateMessage(_ body: String, from nick: String = "Romeo", id: String) -> XMPPLinkEvent {
        .privateMessage(RoomMessage(room: muc, nick: nick, to: naming.puppetJID(for: alice), id: StanzaAttributeID(id), body: body))
    }

    func dmText(_ body: String, in dm: RoomID, id: String) -> MatrixRoomEvent {
        MatrixRoomEvent(eventID: EventID(id)!, room: dm, sender: alice, content: .message(msgtype: .text, body: body))
    }

    @Test func encryptedDMEventsAreAnsweredOnceAnHourAsTheGhostAndNeverSent() async throws {
        let harness = try BridgeHarness()
        let ghost = try await setUp(harness)
        harness.xmpp.feed.yield(privateMessage("psst", id: "p1"))
        let dm = try await eventuallyValue("the DM room") { harness.matrix.state.withLock { $0.sent.first { $0.room != room }?.room } }

        func encrypted(_ id: String) -> MatrixRoomEvent { MatrixRoomEvent(eventID: EventID(id)!, room: dm, sender: alice, content: .encrypted) }
        try await harness.bridge.acceptMatrixEvents([encrypted("$c1"), encrypted("$c2")])
        // A sentinel behind them: once it went out, both encrypted events were handled.
        try await harness.bridge.acceptMatrixEvents([dmText("sentinel", in: dm, id: "$s")])
        try await eventually("the sentinel went out") { harness.xmpp.state.withLock { $0.chats.last?.body } == "sentinel" }
        #expect(harness.xmpp.state.withLock { $0.chats.map(\.body) } == ["sentinel"])
        let notices = harness.matrix.state.withLock { $0.sent.filter { $0.room == dm && $0.message.kind == .notice } }
        #expect(notices.map(\.message.body) == [EncryptedEventNotices.encryptedText(.directChat, heldBack: 0)])
        #expect(notices.map(\.user) == [ghost])
        #expect(try await harness.store.inbox(dm).isEmpty)
        #expect(harness.bridge.metrics.exposition().contains(#"isthmus_encrypted_events_total{room="direct"} 2"#))
    }

    @Test func aPrivateMessageWaitsOutAnUnavailableHomeserverOnTheBridgesClock() async throws {
        let time = ManualTime()
        let harness = try BridgeHarness(clock: time.timeSource)
        _ = try await setUp(harness)
        harness.xmpp.feed.yield(privateMessage("first", id: "p1"))
        try await eventually("the DM's first message") { harness.matrix.state.withLock { $0.sent.filter { $0.room != room }.count } == 1 }

        // The homeserver fails the next send once: the retry sleeps on the injected clock, and only advancing it lets
        // the message out (the send is held until then: nothing else can send it).
        harness.matrix.state.withLock { $0.unavailableSends = 1 }
        let retryAt = time.now + Backoff().pause(after: 0)
        harness.xmpp.feed.yield(privateMessage("second", id: "p2"))
        try await eventually("the retry sleeps on the bridge's clock") { time.sleeping.contains(retryAt) }
        #expect(harness.matrix.state.withLock { $0.sent.filter { $0.room != room }.map(\.message.body) } == ["first"])
        time.advance(by: Backoff().pause(after: 0))
        try await eventually("the second message after the pause") {
            harness.matrix.state.withLock { $0.sent.filter { $0.room != room }.map(\.message.body) } == ["first", "second"]
        }
        await harness.stop()
    }

    @Test func privateMessagesBothWaysInOneDMRoom() async throws {
        let harness = try BridgeHarness()
        let ghost = try await setUp(harness)

        // XMPP → Matrix: one DM room, created once, both messages in it as the ghost; a redelivered PM is sent once.
        harness.xmpp.feed.yield(privateMessage("psst", id: "p1"))
        harness.xmpp.feed.yield(privateMessage("/me waves", id: "p2"))
        harness.xmpp.feed.yield(privateMessage("psst", id: "p1"))
        harness.xmpp.feed.yield(privateMessage("end", id: "p3"))
        try await eventually("three messages in the DM") {
            harness.matrix.state.withLock { $0.sent.filter { $0.room != room }.count } == 3
        }
        let sent = harness.matrix.state.withLock { $0.sent.filter { $0.room != room } }
        #expect(sent.map(\.message) == [OutgoingMatrixMessage(kind: .text, body: "psst"), OutgoingMatrixMessage(kind: .emote, body: "waves"),
                                        OutgoingMatrixMessage(kind: .text, body: "end")])
        #expect(Set(sent.map(\.user)) == [ghost])
        let dm = try #require(sent.first?.room)
        #expect(Set(sent.map(\.room)) == [dm])
        let chat = try #require(try await harness.store.directChat(in: dm))
        #expect(chat == DirectChat(linkedRoom: room, identity: romeoJID.description, matrixUser: alice, muc: muc, ghost: ghost, matrixRoom: dm))

        // Matrix → XMPP: alice's reply is a private message from her occupant to Romeo's, once: the inbox row is gone
        // once it went out, and a replay of the event after that is not sent again (the next message is the sentinel).
        let reply = dmText("hello romeo", in: dm, id: "$r1")
        try await harness.bridge.acceptMatrixEvents([reply])
        try await eventually("alice's reply went out") { harness.xmpp.state.withLock { $0.chats.count } == 1 }
        try await eventually("inbox emptied") { try await harness.store.inbox(dm).isEmpty }
        try await harness.bridge.acceptMatrixEvents([reply])
        try await harness.bridge.acceptMatrixEvents([dmText("second", in: dm, id: "$r2")])
        try await eventually("the second went out") { harness.xmpp.state.withLock { $0.chats.last?.body } == "second" }
        let chats = harness.xmpp.state.withLock { $0.chats }
        #expect(chats.map(\.body) == ["hello romeo", "second"])
        #expect(chats.first?.from == naming.puppetJID(for: alice))
        #expect(chats.first?.to == muc.with(resource: "Romeo"))
        #expect(chats.first?.originID == naming.privateOriginID(for: EventID("$r1")!))
        try await eventually("inbox emptied") { try await harness.store.inbox(dm).isEmpty }

        // The room bounces one: a notice in the DM names why.
        harness.xmpp.feed.yield(.privateMessage(RoomMessage(room: muc, nick: "Romeo", to: naming.puppetJID(for: alice),
                                                            originID: chats[1].originID, id: StanzaAttributeID(chats[1].originID.rawValue),
                                                            error: StanzaErrorInfo(condition: .notAcceptable))))
        try await eventually("bounce notice") {
            harness.matrix.state.withLock { $0.sent.contains { $0.room == dm && $0.message.kind == .notice } }
        }
        let bounce = harness.matrix.state.withLock { $0.sent.last { $0.room == dm } }
        #expect(bounce?.message.body == "⚠️ Your message could not be delivered to Romeo (not-acceptable).")
        #expect(bounce?.user == ghost)

        // Romeo renames, then leaves: the next reply goes to the new nick; the one after gets a notice.
        harness.xmpp.feed.yield(.presence(RoomPresence(room: muc, nick: "Romeo", to: FakeXMPPLink.bot, available: false,
                                                       realJID: romeoJID, statusCodes: [.nickChanged], newNick: "Romeo2")))
        try await eventually("renamed in the store") { try await harness.store.roomGhost(ghost, in: room)?.nick == "Romeo2" }
        try await harness.bridge.acceptMatrixEvents([dmText("renamed?", in: dm, id: "$r3")])
        try await eventually("reply to the new nick") { harness.xmpp.state.withLock { $0.chats.count } == 3 }
        #expect(harness.xmpp.state.withLock { $0.chats.last?.to } == muc.with(resource: "Romeo2"))
        harness.xmpp.feed.yield(.presence(RoomPresence(room: muc, nick: "Romeo2", to: FakeXMPPLink.bot, available: false, realJID: romeoJID)))
        try await eventually("left in the store") { try await harness.store.roomGhost(ghost, in: room)?.joined == false }
        try await harness.bridge.acceptMatrixEvents([dmText("there?", in: dm, id: "$r4")])
        try await eventually("notice: not in the room") {
            harness.matrix.state.withLock { $0.sent.contains { $0.message.body.contains("not in the XMPP room any more") } }
        }
        #expect(harness.matrix.state.withLock { $0.sent.last { $0.room == dm }?.message }
                == OutgoingMatrixMessage(kind: .notice, body: "⚠️ Romeo2 is not in the XMPP room any more; the message was not delivered."))
        #expect(harness.xmpp.state.withLock { $0.chats.count } == 3)
        await harness.stop()
    }

    /// A linked room (XMPP not connected yet, so not active) and alice's DM with Romeo's ghost, as a previous run left them.
    func linkedButNotConnected() async throws -> (BridgeHarness, ghost: UserID, dm: RoomID) {
        let harness = try BridgeHarness()
        let ghost = try #require(harness.matrix.ghostUserID(forIdentity: romeoJID.description))
        let dm = RoomID("!dm:localhost")!
        harness.matrix.state.withLock { $0.members[room] = [alice: "Alice"] }
        try await harness.store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc))
        try await harness.store.saveDirectChat(DirectChat(linkedRoom: room, identity: romeoJID.description, matrixUser: alice, muc: muc,
                                                          ghost: ghost, matrixRoom: dm))
        try await harness.store.saveRoomGhost(RoomGhost(room: room, user: ghost, nick: "Romeo", occupantID: nil, realJID: romeoJID, joined: true))
        return (harness, ghost, dm)
    }

    /// After a start, a DM event (Synapse redelivers at once) waits until the linked room is active — its puppets are
    /// back in the MUC — or the room would refuse the private message from a non-occupant.
    @Test func aDMEventWaitsUntilItsLinkedRoomIsActive() async throws {
        let (harness, _, dm) = try await linkedButNotConnected()
        try await harness.bridge.acceptMatrixEvents([dmText("sent while the bridge was down", in: dm, id: "$early")])
        #expect(try await harness.store.inbox(dm).count == 1)
        // Romeo is still in the MUC: the room lists him when the bridge's bot rejoins (else reconciliation would mark
        // him gone). Announced during the bot's join, as a MUC does: fed right after `.connected`, the presence could
        // reach the portal before the activation started over its occupant list, and was then forgotten.
        harness.xmpp.state.withLock {
            $0.presencesOnBotJoin = [RoomPresence(room: muc, nick: "Romeo", to: FakeXMPPLink.bot, available: true, realJID: romeoJID)]
        }
        harness.xmpp.feed.yield(.connected(reconnected: false))
        try await eventually("the DM message went out") { harness.xmpp.state.withLock { $0.chats.count } == 1 }
        let chat = try #require(harness.xmpp.state.withLock { $0.chats.first })
        #expect(chat.body == "sent while the bridge was down")
        #expect(chat.to == muc.with(resource: "Romeo"))
        #expect(chat.senderJoined, "sent before alice's occupant was back in the MUC")
        await harness.stop()
    }

    /// An edit that arrives while the message it edits still waits (XMPP down) waits behind it — handled at once it
    /// would find nothing to refer to and be dropped — and goes out after it as a correction of it.
    @Test func anEditArrivingWhileItsMessageWaitsGoesOutAfterItAsItsCorrection() async throws {
        let (harness, ghost, dm) = try await linkedButNotConnected()
        try await harness.bridge.acceptMatrixEvents([dmText("helo", in: dm, id: "$m1")])
        let edit = MatrixRoomEvent(eventID: EventID("$m2")!, room: dm, sender: alice,
                                   content: .message(msgtype: .text, body: "hello", details: MessageDetails(replaces: EventID("$m1")!)))
        try await harness.bridge.acceptMatrixEvents([edit])
        // Barrier: the DMs are served from one queue, so once an event of an unlinked room's DM got its notice, the
        // edit before it was handled — and must still wait.
        let barrier = RoomID("!barrier:localhost")!
        try await harness.store.saveDirectChat(DirectChat(linkedRoom: RoomID("!gone:localhost")!, identity: romeoJID.description,
                                                          matrixUser: alice, muc: muc, ghost: ghost, matrixRoom: barrier))
        try await harness.bridge.acceptMatrixEvents([dmText("barrier", in: barrier, id: "$b1")])
        try await eventually("the barrier's notice") { harness.matrix.state.withLock { $0.sent.contains { $0.room == barrier } } }
        #expect(try await harness.store.inbox(dm).count == 2, "the edit was handled before the message it edits")
        harness.xmpp.state.withLock {
            $0.presencesOnBotJoin = [RoomPresence(room: muc, nick: "Romeo", to: FakeXMPPLink.bot, available: true, realJID: romeoJID)]
        }
        harness.xmpp.feed.yield(.connected(reconnected: false))
        try await eventually("both went out") { harness.xmpp.state.withLock { $0.chats.count } == 2 }
        let chats = harness.xmpp.state.withLock { $0.chats }
        #expect(chats.map(\.body) == ["helo", "hello"])
        #expect(chats[1].references.replaces == chats[0].originID.rawValue)
        try await eventually("inbox emptied") { try await harness.store.inbox(dm).isEmpty }
        await harness.stop()
    }

    @Test func aDMWhoseRoomWasUnlinkedSaysSoInsteadOfWaiting() async throws {
        let harness = try BridgeHarness()
        let ghost = UserID("@_xmpp_romeo:localhost")!
        let dm = RoomID("!dm:localhost")!
        try await harness.store.saveDirectChat(DirectChat(linkedRoom: room, identity: romeoJID.description, matrixUser: alice, muc: muc,
                                                          ghost: ghost, matrixRoom: dm))
        try await harness.bridge.acceptMatrixEvents([dmText("anyone?", in: dm, id: "$late")])
        try await eventually("a notice") { harness.matrix.state.withLock { !$0.sent.isEmpty } }
        #expect(harness.matrix.state.withLock { $0.sent.map(\.message) }
                == [OutgoingMatrixMessage(kind: .notice, body: "⚠️ This conversation is no longer bridged to XMPP; the message was not delivered.")])
        try await eventually("consumed") { try await harness.store.inbox(dm).isEmpty }
        await harness.stop()
    }

    @Test func aDMTheUserLeftIsReplacedByANewOne() async throws {
        let harness = try BridgeHarness()
        _ = try await setUp(harness)
        harness.xmpp.feed.yield(privateMessage("first", id: "p1"))
        let first = try await eventuallyValue("the first DM") { harness.matrix.state.withLock { $0.sent.first { $0.room != room }?.room } }
        // Alice leaves: the bridge hears it and forgets the room.
        harness.matrix.state.withLock { _ = $0.members[first]?.removeValue(forKey: alice) }
        let leave = MatrixRoomEvent(eventID: EventID("$leave")!, room: first, sender: alice, stateKey: alice.rawValue,
                                    content: .member(membership: .leave, displayname: nil, reason: nil))
        try await harness.bridge.acceptMatrixEvents([leave])
        try await eventually("forgotten") { try await harness.store.directChat(in: first) == nil }
        harness.xmpp.feed.yield(privateMessage("second", id: "p2"))
        let second = try await eventuallyValue("a new DM") {
            harness.matrix.state.withLock { $0.sent.first { $0.room != room && $0.room != first }?.room }
        }
        #expect(harness.matrix.state.withLock { $0.sent.last?.message.body } == "second")
        #expect(try await harness.store.directChat(in: second)?.matrixUser == alice)
        await harness.stop()
    }

    func invite(_ ghost: UserID, to dm: RoomID, by sender: UserID? = nil, direct: Bool?, id: String) -> MatrixRoomEvent {
        var invite = MatrixRoomEvent(eventID: EventID(id)!, room: dm, sender: sender ?? alice, stateKey: ghost.rawValue,
                                     content: .member(membership: .invite, displayname: nil, reason: nil))
        invite.isDirect = direct
        return invite
    }

    /// A Matrix user starts the DM by inviting Romeo's ghost (RICH.md §12, "Matrix-initiated").
    @Test func aDMTheMatrixUserStartsByInvitingTheGhostCarriesPrivateMessagesBothWays() async throws {
        let harness = try BridgeHarness()
        let ghost = try await setUp(harness)
        try await eventually("alice's occupant recorded") { try await harness.store.puppets(room).contains { $0.user == alice } }
        let dm = RoomID("!started:localhost")!
        harness.matrix.state.withLock { $0.members[dm] = [alice: "Alice"] }
        try await harness.bridge.acceptMatrixEvents([invite(ghost, to: dm, direct: true, id: "$invite")])
        try await eventually("the ghost joined the DM") { harness.matrix.state.withLock { $0.members[dm]?[ghost] != nil } }
        #expect(try await harness.store.directChat(in: dm)
                == DirectChat(linkedRoom: room, identity: romeoJID.description, matrixUser: alice, muc: muc, ghost: ghost, matrixRoom: dm))

        // Matrix → XMPP: a private message from alice's occupant to Romeo.
        try await harness.bridge.acceptMatrixEvents([dmText("hi romeo", in: dm, id: "$d1")])
        try await eventually("the private message went out") { harness.xmpp.state.withLock { $0.chats.count } == 1 }
        let chat = try #require(harness.xmpp.state.withLock { $0.chats.first })
        #expect(chat.body == "hi romeo")
        #expect(chat.from == naming.puppetJID(for: alice))
        #expect(chat.to == muc.with(resource: "Romeo"))

        // XMPP → Matrix: Romeo's answer lands in the room alice started, not in a new one.
        harness.xmpp.feed.yield(privateMessage("hi alice", id: "p1"))
        try await eventually("the answer in the DM") {
            harness.matrix.state.withLock { $0.sent.contains { $0.room == dm && $0.message.body == "hi alice" } }
        }
        #expect(harness.matrix.state.withLock { $0.sent.filter { $0.room != room }.map(\.room) } == [dm])

        // A second DM she starts with him replaces the first: the ghost leaves the old room.
        let next = RoomID("!again:localhost")!
        harness.matrix.state.withLock { $0.members[next] = [alice: "Alice"] }
        try await harness.bridge.acceptMatrixEvents([invite(ghost, to: next, direct: true, id: "$invite2")])
        try await eventually("the ghost joined the new DM") { harness.matrix.state.withLock { $0.members[next]?[ghost] != nil } }
        try await eventually("the ghost left the old DM") { harness.matrix.state.withLock { $0.leaves.contains { $0 == (dm, ghost) } } }
        #expect(try await harness.store.directChat(in: dm) == nil)
        #expect(try await harness.store.directChat(in: next)?.matrixUser == alice)
        await harness.stop()
    }

    @Test func aDirectInvitationTheGhostCannotTakeIsDeclinedAnotherIsLeftAlone() async throws {
        let harness = try BridgeHarness()
        let ghost = try await setUp(harness)
        try await eventually("alice's occupant recorded") { try await harness.store.puppets(room).contains { $0.user == alice } }
        // Not a direct chat (a room upgrade's invitation looks like this); then a direct chat from someone with no
        // occupant in any room Romeo is in — declined, and a barrier: a leave for the first would have come before.
        let group = RoomID("!group:localhost")!
        let stranger = RoomID("!stranger:localhost")!
        let mallory = UserID("@mallory:localhost")!
        try await harness.bridge.acceptMatrixEvents([invite(ghost, to: group, direct: nil, id: "$group")])
        try await harness.bridge.acceptMatrixEvents([invite(ghost, to: stranger, by: mallory, direct: true, id: "$stranger")])
        try await eventually("the stranger's invitation declined") {
            harness.matrix.state.withLock { $0.leaves.contains { $0 == (stranger, ghost) } }
        }
        #expect(harness.matrix.state.withLock { $0.leaves.map(\.0) } == [stranger], "the other invitation is left alone")
        #expect(try await harness.store.directChat(in: group) == nil)
        #expect(try await harness.store.directChat(in: stranger) == nil)
        #expect(try await harness.store.inbox(group).isEmpty, "nothing queued for it")
        #expect(try await harness.store.inbox(stranger).isEmpty, "nothing queued for it")
        await harness.stop()
    }
}
