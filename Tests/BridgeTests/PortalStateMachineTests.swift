@testable import Bridge
import Foundation
import IsthmusCommon
import Testing

/// The portal's control state as literal sequences: events in, actions out, time injected.
@Suite struct PortalStateMachineTests {
    let t0 = ContinuousClock.now
    let room = RoomID("!room:localhost")!
    let alice = UserID("@alice:localhost")!

    func queued(_ seq: Int64, _ body: String = "hi") -> QueuedMatrixEvent {
        QueuedMatrixEvent(seq: seq, event: MatrixRoomEvent(eventID: EventID("$e\(seq)")!, room: room, sender: alice,
                                                           content: .message(msgtype: "m.text", body: body)))
    }

    /// A machine whose link came up at t0 with everything resent and the first drain done.
    func active() -> PortalStateMachine {
        var machine = PortalStateMachine()
        _ = machine.receive(.event(.activate), now: t0)
        _ = machine.receive(.activated(botJoined: true, resent: true), now: t0)
        _ = machine.receive(.drained(.complete(highestSeq: 0)), now: t0)
        return machine
    }

    @Test func activationDrainsTheStoreWithATimelineCheckBeforeGhostsAndStatus() {
        var machine = PortalStateMachine()
        #expect(machine.receive(.event(.activate), now: t0) == [.activate])
        #expect(machine.receive(.activated(botJoined: true, resent: true), now: t0)
                == [.queueGhostReconciliation, .drainStore(checkTimeline: true), .markActive])
        #expect(machine.receive(.drained(.complete(highestSeq: 3)), now: t0) == [])
        #expect(machine.highestSeq == 3)
    }

    @Test func aBotThatCannotJoinLeavesMatrixEventsQueued() {
        var machine = PortalStateMachine()
        _ = machine.receive(.event(.activate), now: t0)
        #expect(machine.receive(.activated(botJoined: false, resent: false), now: t0) == [])
        #expect(machine.receive(.event(.matrixEvents([queued(1)])), now: t0) == [])
        #expect(machine.inboxNeedsReload)
    }

    @Test func handedInEventsGoOutAsTheyAreAndOnlyOnce() {
        var machine = active()
        #expect(machine.receive(.event(.matrixEvents([queued(1), queued(2)])), now: t0) == [.drain([queued(1), queued(2)])])
        #expect(machine.receive(.drained(.complete(highestSeq: 2)), now: t0) == [])
        // The same rows again (read back by a drain, or handed in twice): not handled again.
        #expect(machine.receive(.event(.matrixEvents([queued(2)])), now: t0) == [])
        #expect(machine.receive(.event(.matrixEvents([queued(2), queued(3)])), now: t0) == [.drain([queued(3)])])
    }

    @Test func eventsBehindAHoleWaitForATimelineCheckOthersDoNot() {
        var machine = active()
        #expect(machine.receive(.event(.timelineGap), now: t0) == [])
        #expect(machine.receive(.event(.matrixEvents([queued(5)])), now: t0) == [.drainStore(checkTimeline: true)])
        #expect(machine.receive(.drained(.complete(highestSeq: 5)), now: t0) == [])
        #expect(machine.receive(.event(.matrixEvents([queued(6)])), now: t0) == [.drain([queued(6)])])
    }

    @Test func aBackgroundCheckDrainsWithTheTimelineOnlyWhileMessagesCanGoOut() {
        var machine = active()
        #expect(machine.receive(.event(.checkTimeline), now: t0) == [.drainStore(checkTimeline: true)])
        _ = machine.receive(.drained(.complete(highestSeq: 0)), now: t0)
        _ = machine.receive(.event(.xmppDisconnected), now: t0)
        #expect(machine.receive(.event(.checkTimeline), now: t0) == [])
        // Still owed: the activation after the reconnect checks first.
        _ = machine.receive(.event(.activate), now: t0)
        #expect(machine.receive(.activated(botJoined: true, resent: true), now: t0).contains(.drainStore(checkTimeline: true)))
    }

    @Test func anXMPPTimeoutPausesTheInboxAndRetriesAfterTheDelay() {
        var machine = active()
        #expect(machine.receive(.event(.matrixEvents([queued(1), queued(2)])), now: t0) == [.drain([queued(1), queued(2)])])
        #expect(machine.receive(.drained(.blocked(retry: true)), now: t0) == [.scheduleInboxRetry(at: t0 + .seconds(5))])
        // While paused, new events stay in the store.
        #expect(machine.receive(.event(.matrixEvents([queued(3)])), now: t0) == [])
        // Resends first, then everything from the store, in order (the rows of the failed drain included).
        #expect(machine.receive(.event(.retryInbox), now: t0 + .seconds(5)) == [.resendUndelivered])
        #expect(machine.receive(.resent(true), now: t0 + .seconds(5)) == [.drainStore(checkTimeline: false)])
        #expect(machine.receive(.drained(.complete(highestSeq: 3)), now: t0) == [])
        #expect(machine.receive(.event(.matrixEvents([queued(4)])), now: t0) == [.drain([queued(4)])])
    }

    @Test func aResendThatFailsAgainWaitsAgain() {
        var machine = active()
        _ = machine.receive(.drained(.blocked(retry: true)), now: t0)
        #expect(machine.receive(.event(.retryInbox), now: t0) == [.resendUndelivered])
        #expect(machine.receive(.resent(false), now: t0 + .seconds(5)) == [.scheduleInboxRetry(at: t0 + .seconds(10))])
    }

    @Test func resendsThatCannotGoOutAtActivationPauseTheInbox() {
        var machine = PortalStateMachine()
        _ = machine.receive(.event(.activate), now: t0)
        #expect(machine.receive(.activated(botJoined: true, resent: false), now: t0)
                == [.queueGhostReconciliation, .scheduleInboxRetry(at: t0 + .seconds(5)), .markActive])
        #expect(machine.receive(.event(.matrixEvents([queued(1)])), now: t0) == [])
    }

    @Test func aDisconnectStopsMatrixEventsUntilTheNextActivationReadsTheStore() {
        var machine = active()
        #expect(machine.receive(.event(.xmppDisconnected), now: t0) == [.recordDisconnected])
        #expect(machine.receive(.event(.matrixEvents([queued(1)])), now: t0) == [])
        #expect(machine.receive(.event(.retryInbox), now: t0) == [])
        #expect(machine.receive(.event(.selfCheck), now: t0) == [])
        #expect(machine.receive(.event(.activate), now: t0) == [.activate])
        #expect(machine.receive(.activated(botJoined: true, resent: true), now: t0).contains(.drainStore(checkTimeline: true)))
    }

    @Test func theSelfCheckDrainsWithATimelineCheckThenSyncsPuppetsThenPings() {
        var machine = active()
        #expect(machine.receive(.event(.selfCheck), now: t0) == [.drainStore(checkTimeline: true)])
        #expect(machine.receive(.drained(.complete(highestSeq: 0)), now: t0) == [.syncPuppets, .selfPing])
        #expect(machine.receive(.selfPinged(joined: true), now: t0) == [])
        // A blocked drain skips the puppet sync but still pings.
        _ = machine.receive(.event(.selfCheck), now: t0)
        #expect(machine.receive(.drained(.blocked(retry: false)), now: t0) == [.selfPing])
    }

    @Test func aSelfPingThatSaysNotJoinedRejoins() {
        var machine = active()
        _ = machine.receive(.event(.selfCheck), now: t0)
        _ = machine.receive(.drained(.complete(highestSeq: 0)), now: t0)
        #expect(machine.receive(.selfPinged(joined: false), now: t0) == [.activate])
        #expect(!machine.botJoined)
    }

    @Test func theBridgeLeavingTheMUCRejoinsUnlessKickedOrBanned() {
        var machine = active()
        #expect(machine.receive(.botLeft(rejoin: true), now: t0) == [.activate])
        machine = active()
        #expect(machine.receive(.botLeft(rejoin: false), now: t0) == [])
        #expect(machine.receive(.event(.matrixEvents([queued(1)])), now: t0) == [])
    }

    @Test func ghostsAreReconciledOnlyWhileTheBridgeIsInTheMUC() {
        var machine = active()
        #expect(machine.receive(.event(.reconcileGhosts), now: t0) == [.reconcileGhosts])
        _ = machine.receive(.event(.xmppDisconnected), now: t0)
        #expect(machine.receive(.event(.reconcileGhosts), now: t0) == [])
    }

    @Test func roomTrafficIsHandledInArrivalOrder() {
        var machine = active()
        let message = RoomMessage(room: JID("lounge@conference.localhost")!, nick: "romeo", body: "hi")
        let presence = RoomPresence(room: JID("lounge@conference.localhost")!, nick: "romeo", available: true)
        #expect(machine.receive(.event(.xmppPresence(presence)), now: t0) == [.handleXMPPPresence(presence)])
        #expect(machine.receive(.event(.xmppMessage(message)), now: t0) == [.handleXMPPMessage(message)])
    }

    @Test func unlinkIsTheLastThingAPortalDoes() {
        var machine = active()
        #expect(machine.receive(.event(.unlink(xmppConnected: true)), now: t0) == [.unlink])
        #expect(machine.closed)
        #expect(machine.receive(.event(.activate), now: t0) == [])
        #expect(machine.receive(.event(.matrixEvents([queued(1)])), now: t0) == [])
        #expect(machine.receive(.event(.unlink(xmppConnected: true)), now: t0) == [])
    }

    @Test func aPortalLoadedOnlyToUnlinkKnowsWhetherXMPPIsUp() {
        var machine = PortalStateMachine()
        #expect(machine.receive(.event(.unlink(xmppConnected: true)), now: t0) == [.unlink])
        #expect(machine.xmppConnected)
    }
}

/// Which homeserver transactions may sit behind one that was never pushed.
@Suite struct TransactionGapDetectorTests {
    let t0 = ContinuousClock.now

    func id(_ value: String) -> TransactionID { TransactionID(value)! }

    @Test func aHoleInTheIDsWhileTheHomeserverRetriesAsksForACheck() {
        var detector = TransactionGapDetector(window: .seconds(120))
        detector.arm(now: t0)
        #expect(detector.observe(id("100"), now: t0) == false)   // the first id is the baseline
        #expect(detector.observe(id("101"), now: t0) == false)
        #expect(detector.observe(id("103"), now: t0) == true)    // 102 was never pushed
        #expect(detector.observe(id("104"), now: t0) == false)
        #expect(detector.observe(id("102"), now: t0) == false)   // its late delivery
    }

    @Test func holesOutsideTheWindowAreOtherAppservicesTransactions() {
        var detector = TransactionGapDetector(window: .seconds(120))
        detector.arm(now: t0)
        #expect(detector.observe(id("7"), now: t0) == false)
        #expect(detector.observe(id("20"), now: t0 + .seconds(121)) == false)
        detector.arm(now: t0 + .seconds(200))   // a transaction failed
        #expect(detector.observe(id("25"), now: t0 + .seconds(201)) == true)
    }

    @Test func idsThatAreNotNumbersAskWhileArmedOnly() {
        var detector = TransactionGapDetector(window: .seconds(10))
        detector.arm(now: t0)
        #expect(detector.observe(id("abc"), now: t0) == true)
        #expect(detector.observe(nil, now: t0 + .seconds(9)) == true)
        #expect(detector.observe(id("abc"), now: t0 + .seconds(10)) == false)
    }
}
