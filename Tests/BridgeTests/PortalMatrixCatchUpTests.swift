import Bridge
import Foundation
import IsthmusCommon
@testable import IsthmusStore
import Testing
import TestSupport

/// Matrix messages the homeserver stored but never pushed (Synapse strands a transaction when its retry of a down
/// appservice ends while a new transaction is being written) are found in the room's timeline and bridged in order.
@Suite struct PortalMatrixCatchUpTests {
    let room = RoomID("!room:localhost")!
    let muc = JID("lounge@conference.localhost")!
    let alice = UserID("@alice:localhost")!

    /// A harness whose start window (when the homeserver may strand a transaction, so drains check the timeline) no
    /// loaded machine outlasts: with the default 20 s, full parallel runs on two busy cores spent the whole window
    /// activating, and the drains under test then had no reason to read the timeline.
    func harness(selfCheckInterval: Duration = .seconds(300)) throws -> BridgeHarness {
        try BridgeHarness(selfCheckInterval: selfCheckInterval, timelineCheckWindow: .seconds(3600))
    }

    /// Links the room and waits until the activation's own drain is over: that drain checks the timeline too, and a
    /// message pushed while its check is under way would be drained without the timeline the test sets up next (its
    /// stranded predecessor then goes out after it). The portal handles its inputs one at a time, so an XMPP message
    /// bridged after the activation proves the drain before it done.
    func linked(_ harness: BridgeHarness) async throws {
        try await PortalTests().linked(harness, members: [alice: "Alice"])
        harness.xmpp.feed.yield(.message(harness.xmpp.occupantSays("romeo", "barrier", in: muc, occupantID: "occ-barrier")))
        try await eventually("the activation's drain is over") { harness.matrix.state.withLock { $0.sent.count } >= 1 }
    }

    func message(_ id: String, _ body: String, from sender: UserID? = nil, msgtype: MessageType = .text) -> MatrixRoomEvent {
        MatrixRoomEvent(eventID: EventID("$\(id)")!, room: room, sender: sender ?? alice, content: .message(msgtype: msgtype, body: body))
    }

    func entry(_ event: MatrixRoomEvent?, id: String? = nil, secondsAgo: Double = 0) -> MatrixTimelineEntry {
        MatrixTimelineEntry(eventID: event?.eventID ?? EventID("$\(id ?? "other")")!, timestamp: Date().addingTimeInterval(-secondsAgo),
                            age: .milliseconds(Int64(secondsAgo * 1000)), event: event)
    }

    func sentBodies(_ harness: BridgeHarness) -> [String] {
        harness.xmpp.state.withLock { $0.sent.map(\.body) }
    }

    @Test func aMessageThatWasNeverPushedIsBridgedBeforeTheLaterOneOnceOnly() async throws {
        let harness = try harness()
        try await linked(harness)
        let one = message("one", "one"), two = message("two", "two"), three = message("three", "three")
        // The homeserver repeats an event (as across pages): tolerated, the first place counts.
        harness.matrix.state.withLock { $0.timelines[room] = [entry(one, secondsAgo: 1), entry(one, secondsAgo: 1), entry(two)] }
        try await harness.bridge.acceptMatrixEvents([two])   // `one` sits in a stranded transaction
        try await eventually("both sent") { sentBodies(harness).count == 2 }
        #expect(sentBodies(harness) == ["one", "two"])

        // The homeserver's late copy of `one` is a duplicate; the next message goes out normally.
        harness.matrix.state.withLock { $0.timelines[room]?.append(entry(three)) }
        try await harness.bridge.acceptMatrixEvents([one])
        try await harness.bridge.acceptMatrixEvents([three])
        try await eventually("third sent") { sentBodies(harness).count >= 3 }
        #expect(sentBodies(harness) == ["one", "two", "three"])
        await harness.stop()
    }

    @Test func onlyStrandedBridgeableMessagesSinceTheLinkAreRecovered() async throws {
        let harness = try harness()
        try await linked(harness)
        let ghost = harness.matrix.ghostUserID(forIdentity: "romeo@localhost")!
        let beforeLink = message("old", "from before the link")
        let fromGhost = message("ghost", "bridged from XMPP", from: ghost)
        let fromBot = message("bot", "a notice", from: harness.matrix.botUserID, msgtype: "m.notice")
        let empty = message("image", "", msgtype: "m.image")
        let pushed = message("pushed", "pushed")
        let inFlight = message("flight", "on its way")
        harness.matrix.state.withLock {
            $0.timelines[room] = [entry(beforeLink, secondsAgo: 3600), entry(fromGhost, secondsAgo: 2), entry(fromBot, secondsAgo: 2),
                                  entry(empty, secondsAgo: 2), entry(nil, id: "member", secondsAgo: 2), entry(pushed, secondsAgo: 1),
                                  entry(inFlight)]
        }
        try await harness.bridge.acceptMatrixEvents([pushed])
        try await eventually("pushed sent") { !sentBodies(harness).isEmpty }
        #expect(sentBodies(harness) == ["pushed"])
        #expect(harness.matrix.state.withLock { $0.timelineReads } >= 1)
        await harness.stop()
    }

    @Test func theSelfCheckRecoversAStrandedMessageWithNothingAfterIt() async throws {
        let harness = try harness(selfCheckInterval: .milliseconds(50))
        try await linked(harness)
        // Stamped now (so after the link's activation) but 40 s old by the homeserver's count: not on its way.
        let stranded = MatrixTimelineEntry(eventID: EventID("$lone")!, timestamp: Date(), age: .seconds(40), event: message("lone", "lone"))
        harness.matrix.state.withLock { $0.timelines[room] = [stranded] }
        try await eventually("recovered") { sentBodies(harness) == ["lone"] }
        await harness.stop()
    }

    @Test func aTimedOutSendIsRetriedWithoutWaitingForAReconnect() async throws {
        let harness = try harness()
        try await linked(harness)
        harness.xmpp.state.withLock { $0.timeoutSends = 1 }
        try await harness.bridge.acceptMatrixEvents([message("a", "first"), message("b", "second")])
        // Without the retry they would wait for the next self-check (five minutes here).
        try await eventually("both sent after the retry", timeout: 20) { sentBodies(harness).count >= 2 }
        #expect(sentBodies(harness) == ["first", "second"])
        await harness.stop()
    }
}

extension PortalMatrixCatchUpTests {
    @Test func theSelfCheckBringsPuppetsInLineWithMembersWhoseEventsNeverArrived() async throws {
        let harness = try harness(selfCheckInterval: .milliseconds(50))
        try await linked(harness)
        let bob = UserID("@bob:localhost")!
        // Bob joined and Alice left, but neither membership event was pushed.
        harness.matrix.state.withLock { $0.members[room] = [bob: "Bob"] }
        try await eventually("Bob's puppet joined") { harness.xmpp.state.withLock { $0.joins.contains { $0.nick == "Bob" } } }
        try await eventually("Alice's puppet left") { harness.xmpp.state.withLock { $0.leaves.contains { $0.nick == "Alice" } } }
        await harness.stop()
    }
}

extension PortalMatrixCatchUpTests {
    @Test func aTransactionTheBridgeFailedMakesRoomsCheckTheirTimelines() async throws {
        // No window after activation: only the failure can cause a check here (the self-check is minutes away).
        let harness = try BridgeHarness(timelineCheckWindow: .zero)
        try await linked(harness)
        let seen = message("seen", "seen"), lone = message("lone", "stranded")
        try await harness.bridge.acceptMatrixEvents([seen])
        try await eventually("seen sent") { sentBodies(harness) == ["seen"] }
        harness.matrix.state.withLock { $0.timelines[room] = [entry(lone, secondsAgo: 2), entry(seen, secondsAgo: 1)] }
        try await harness.store.write { db in
            try db.execute("""
                CREATE TRIGGER poison BEFORE INSERT ON matrix_inbox WHEN NEW.event_id = '$poison'
                BEGIN SELECT RAISE(ABORT, 'injected failure'); END;
                """)
        }
        await #expect(throws: (any Error).self) { try await harness.bridge.acceptMatrixEvents([message("poison", "poison")]) }
        try await eventually("the stranded message recovered") { sentBodies(harness) == ["seen", "stranded"] }
        await harness.stop()
    }
}

extension PortalMatrixCatchUpTests {
    /// Seen on the test bed: Synapse stranded transaction 65; 66 held only a ghost's echo (nothing the bridge keeps);
    /// 67 held the next message, which went out before the stranded one.
    @Test func aHoleBeforeATransactionWithNothingToKeepStillMakesRoomsCheckFirst() async throws {
        let harness = try harness()   // inside the window after the start, when the homeserver may strand one
        try await linked(harness)
        let first = message("first", "first"), stranded = message("stranded", "stranded"), later = message("later", "later")
        try await harness.bridge.acceptMatrixEvents([first], transaction: TransactionID("10"))
        try await eventually("first sent") { sentBodies(harness) == ["first"] }
        harness.matrix.state.withLock {
            $0.timelines[room] = [entry(first, secondsAgo: 3), entry(stranded, secondsAgo: 2), entry(later, secondsAgo: 1)]
        }
        // 11 (with `stranded`) never comes; 12 brings nothing the bridge keeps (the handler dropped a ghost's echo).
        try await harness.bridge.acceptMatrixEvents([], transaction: TransactionID("12"))
        try await harness.bridge.acceptMatrixEvents([later], transaction: TransactionID("13"))
        try await eventually("all three sent") { sentBodies(harness).count >= 3 }
        #expect(sentBodies(harness) == ["first", "stranded", "later"])
        await harness.stop()
    }
}

extension PortalMatrixCatchUpTests {
    /// Seen in FailoverTests on ejabberd: Synapse held the transaction with `five` and retried it into the instance
    /// that took over, after the stopped instance had queued `six` and `seven` (the hole it saw died with it). The
    /// inbox's arrival order is then not the room's: the first drain after the activation checks the timeline, finds
    /// nothing missing, and must still follow the timeline's order.
    @Test func aTransactionDeliveredLateIsDrainedInTheTimelinesOrderNotInArrivalOrder() async throws {
        let harness = try harness()
        // The link was bridged long before this start (as after a take-over): its timeline floor is not this
        // activation's time, however long a loaded machine takes to activate.
        _ = try await harness.store.recordFirstActivation(room, at: Date().addingTimeInterval(-60))
        let five = message("five", "five"), six = message("six", "six"), seven = message("seven", "seven")
        let encoder = JSONEncoder()
        _ = try await harness.store.enqueueInbox(try [six, seven, five].map { (room, $0.eventID, Array(try encoder.encode($0))) })
        harness.matrix.state.withLock { $0.timelines[room] = [entry(five, secondsAgo: 0.3), entry(six, secondsAgo: 0.2), entry(seven, secondsAgo: 0.1)] }
        try await linked(harness)
        try await eventually("all three sent") { sentBodies(harness).count >= 3 }
        #expect(sentBodies(harness) == ["five", "six", "seven"])
        await harness.stop()
    }
}
