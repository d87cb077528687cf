@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing

/// The Matrix room's events through the portal machine: in inbox order, exactly once, from the right puppets.
@Suite struct PortalMatrixInboundMachineTests {
    @Test func handedInMessagesAreMappedThenSentByTheirPuppetOnce() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let one = f.text(1, "one"), two = f.text(2, "two")
        // Alone, a message is mapped, then sent.
        #expect(f.act(.matrixEvents([one])) == [.xmppDelivery(.insertMapping(f.mapping(one), consumingInbox: 1, delivery: f.outgoing(one)))])
        #expect(f.act(.xmppDelivery(.mappingInserted(f.outgoing(one), inserted: true))) == [.groupchat(f.outgoing(one))])
        #expect(f.act(.xmppDelivery(.groupchatSent(f.outgoing(one), nil))) == [])
        // Mapped already (a replayed transaction, a late copy of a recovered message): nothing goes out.
        #expect(f.act(.matrixEvents([two])) == [.xmppDelivery(.insertMapping(f.mapping(two), consumingInbox: 2, delivery: f.outgoing(two)))])
        #expect(f.act(.xmppDelivery(.mappingInserted(f.outgoing(two), inserted: false))) == [])
        #expect(f.machine.highestSeq == 2)
        // The same rows handed in again are not handled again.
        #expect(f.act(.matrixEvents([one, two])) == [])
    }

    /// Issue 26: the plain messages a drain finds together are mapped in one commit, then go out one after another, in
    /// order — each once the one before it is out; one mapped already is skipped.
    @Test func aRunOfPlainMessagesIsMappedInOneCommitThenSentInOrder() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let one = f.text(1, "one"), two = f.text(2, "two"), three = f.text(3, "three")
        #expect(f.act(.matrixEvents([one, two, three])) == [f.mapRun([one, two, three])])
        #expect(f.act(f.mapped([one, two, three], [true, false, true])) == [.groupchat(f.outgoing(one))])
        #expect(f.act(.xmppDelivery(.groupchatSent(f.outgoing(one), nil))) == [.groupchat(f.outgoing(three))])
        #expect(f.act(.xmppDelivery(.groupchatSent(f.outgoing(three), nil))) == [])
        #expect(f.machine.highestSeq == 3 && f.machine.drain == nil)
        // A store that cannot map them: nothing goes out and the inbox pauses (the rows stay queued).
        let four = f.text(4, "four"), five = f.text(5, "five")
        #expect(f.act(.matrixEvents([four, five])) == [f.mapRun([four, five])])
        #expect(f.act(.xmppDelivery(.mappingsInserted([f.outgoing(four), f.outgoing(five)], inserted: nil)))
                == [.schedule(.inboxRetry, at: f.t0 + .seconds(5))])
    }

    /// A run ends where a message needs the store to be translated (a reply), or where its sender's puppet is not in
    /// the MUC yet; a command in it is dropped first.
    @Test func aRunStopsAtAReplyOrAPuppetNotInTheMUCAndDropsCommands() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let one = f.text(1, "one"), command = f.text(2, "!isthmus status"), two = f.text(3, "two")
        let reply = QueuedMatrixEvent(seq: 4, event: MatrixRoomEvent(eventID: EventID("$e4")!, room: f.room, sender: f.alice,
                                                                   content: .message(msgtype: .text, body: "re", details: MessageDetails(replyTo: one.event.eventID))))
        #expect(f.act(.matrixEvents([one, command, two, reply])) == [.xmppDelivery(.dequeue(seq: 2)), f.mapRun([one, two])])
        _ = f.act(f.mapped([one, two], [true, true]))
        _ = f.act(.xmppDelivery(.groupchatSent(f.outgoing(one), nil)))
        // The reply goes alone, after the run is out: its target is read from the map first.
        #expect(f.act(.xmppDelivery(.groupchatSent(f.outgoing(two), nil))) == [.xmppDelivery(.resolveMatrixTargets(reply))])
        // Bob has no puppet yet: his message goes alone (his puppet joins before it is sent).
        let bob = UserID("@bob:localhost")!
        let fromAlice = f.text(5, "hi bob"), fromBob = f.text(6, from: bob, "hello")
        #expect(f.act(.matrixEvents([fromAlice, fromBob]))
                == [.xmppDelivery(.insertMapping(f.mapping(fromAlice), consumingInbox: 5, delivery: f.outgoing(fromAlice)))])
    }

    @Test func emotesAndOtherBotsNoticesGoOutUnbridgeableEventsAreDequeued() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let emote = f.text(1, "waves", msgtype: .emote)
        guard case .xmppDelivery(.insertMapping(let mapping, _, _, _))? = f.act(.matrixEvents([emote])).first else {
            Issue.record("not mapped")
            return
        }
        #expect(mapping.body == "/me waves")
        _ = f.act(.xmppDelivery(.mappingInserted(f.outgoing(emote), inserted: false)))
        #expect(f.act(.matrixEvents([f.text(2, from: f.ghost(of: "romeo"))])) == [.dequeue(seq: 2)])
        #expect(f.act(.matrixEvents([f.text(3, from: f.bot)])) == [.dequeue(seq: 3)])
        #expect(f.act(.matrixEvents([f.text(4, "", msgtype: .image)])) == [.xmppDelivery(.dequeue(seq: 4))])
    }

    @Test func commandsToTheBridgeAreNeverBridged() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        #expect(f.act(.matrixEvents([f.text(1, "!isthmus status")])) == [.xmppDelivery(.dequeue(seq: 1))])
        #expect(f.act(.matrixEvents([f.text(2, "!isthmus frobnicate")])) == [.xmppDelivery(.dequeue(seq: 2))])
        #expect(!f.machine.isBridgeableMessage(f.text(3, "!isthmus unlink").event))
        // Not a command: bridged.
        let quoted = f.text(4, "try !isthmus help")
        #expect(f.machine.isBridgeableMessage(quoted.event))
        #expect(f.act(.matrixEvents([quoted])) == [.xmppDelivery(.insertMapping(f.mapping(quoted), consumingInbox: 4, delivery: f.outgoing(quoted)))])
    }

    /// A self-check while the inbox waits for its retry (a send timed out mid-run) does the retry's resends first:
    /// nothing newer overtakes the messages mapped and not out yet.
    @Test func aSelfCheckWhileTheInboxWaitsForItsRetryResendsFirst() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let one = f.text(1, "one"), two = f.text(2, "two")
        #expect(f.runTimedOut([one, two]) == [.schedule(.inboxRetry, at: f.t0 + .seconds(5))])
        let soon = f.t0 + .seconds(1)
        #expect(f.act(.selfCheck, at: soon) == [.loadUndelivered])
        #expect(f.act(.undeliveredLoaded(f.undelivered([one, two])), at: soon) == [.groupchat(f.outgoing(one, purpose: .resend))])
        #expect(f.act(.xmppDelivery(.groupchatSent(f.outgoing(one, purpose: .resend), nil)), at: soon) == [.groupchat(f.outgoing(two, purpose: .resend))])
        // Then the inbox, with the self-check's timeline check.
        #expect(f.act(.xmppDelivery(.groupchatSent(f.outgoing(two, purpose: .resend), nil)), at: soon) == [.catchUp(.readTimeline)])
        #expect(!f.machine.inboxBlocked)
        // The retry asked for earlier finds nothing left to do.
        #expect(f.act(.retryInbox, at: f.t0 + .seconds(5)) == [])
    }

    /// A puppet whose rename failed is not ready (its name is not the user's current one): its user's messages go
    /// alone, so each is translated after the rename its send tries first.
    @Test func aPuppetStillToBeRenamedKeepsItsMessagesOutOfRuns() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let rename = f.member(1, f.alice, .join, name: "Alicia")
        let change = f.puppetJoin(f.alice, "Alicia", change: true, then: .membership(eventID: rename.event.eventID, seq: 1))
        #expect(f.act(.matrixEvents([rename])) == [.puppets(.join(change))])
        _ = f.act(.puppets(.joinFailed(change, .refused(StanzaErrorInfo(condition: "forbidden")))))
        #expect(!f.machine.matrixMembers.isReady(f.alice) && f.machine.puppets[f.alice]?.joined == true)
        let one = f.text(2, "one"), two = f.text(3, "two")
        #expect(f.act(.matrixEvents([one, two])) == [.xmppDelivery(.insertMapping(f.mapping(one), consumingInbox: 2, delivery: f.outgoing(one)))])
    }

    @Test func aJoinGivesAPuppetTheDisplaynameOrADeterministicAlternative() {
        var f = MachineFixture()
        f.activate()
        let joinEvent = f.member(1, f.bob, .join, name: "Alice")
        let first = f.puppetJoin(f.bob, "Alice", then: .membership(eventID: joinEvent.event.eventID, seq: 1))
        #expect(f.act(.matrixEvents([joinEvent])) == [.puppets(.join(first))])
        let second = f.puppetJoin(f.bob, "Alice", attempt: 1, then: .membership(eventID: joinEvent.event.eventID, seq: 1))
        #expect(second.nick == "Alice (Matrix)")
        #expect(f.act(.puppets(.joinAnswered(first, .nickConflict))) == [.puppets(.join(second))])
        #expect(f.act(.puppets(.joinAnswered(second, .joined(nick: "Alice (Matrix)", created: false))))
                == [.puppets(.save(f.puppet(f.bob, "Alice (Matrix)", displayname: "Alice"))), .dequeue(seq: 1)])
    }

    @Test func aPuppetWhoseEveryNickIsTakenIsReportedInTheRoom() {
        var f = MachineFixture()
        f.activate()
        let joinEvent = f.member(1, f.bob, .join, name: "Bob")
        var actions = f.act(.matrixEvents([joinEvent]))
        for _ in 0..<9 {
            guard case .puppets(.join(let join))? = actions.last else { break }
            actions = f.act(.puppets(.joinAnswered(join, .nickConflict)))
        }
        guard case .puppets(.join(let last))? = actions.last else {
            Issue.record("stopped early")
            return
        }
        #expect(last.nick == "Bob (Matrix 9)")
        #expect(f.act(.puppets(.joinAnswered(last, .nickConflict)))
                == [.postNotice("⚠️ Bob could not join the XMPP room (every nick tried for @bob:localhost is taken).",
                                subject: "join-failed:$m1"), .dequeue(seq: 1)])
    }

    @Test func aDisplaynameChangeIsANickChangeAndKeepsTheAlternativeWhenUnchanged() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let rename = f.member(1, f.alice, .join, name: "Alicia")
        let change = f.puppetJoin(f.alice, "Alicia", change: true, then: .membership(eventID: rename.event.eventID, seq: 1))
        #expect(f.act(.matrixEvents([rename])) == [.puppets(.join(change))])
        #expect(f.act(.puppets(.joinAnswered(change, .joined(nick: "Alicia", created: false)))) == [.puppets(.save(f.puppet(f.alice, "Alicia"))), .dequeue(seq: 1)])
        // A membership event without a name change: nothing to do.
        #expect(f.act(.matrixEvents([f.member(2, f.alice, .join, name: "Alicia")])) == [.dequeue(seq: 2)])
    }

    @Test func leavesKicksAndBansTakeThePuppetOutSayingWhy() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice", f.bob: "Bob"])
        #expect(f.act(.matrixEvents([f.member(1, f.bob, .leave)]))
                == [.puppets(.leave(nick: "Bob", occupant: f.puppetJID(f.bob), status: nil)), .puppets(.delete(f.bob)), .dequeue(seq: 1)])
        #expect(f.act(.matrixEvents([f.member(2, f.alice, .ban, by: f.bob, reason: "spam")]))
                == [.puppets(.leave(nick: "Alice", occupant: f.puppetJID(f.alice), status: "Banned on Matrix by bob: spam")),
                    .puppets(.delete(f.alice)), .dequeue(seq: 2)])
        // Ghosts and the bot have no puppets.
        #expect(f.act(.matrixEvents([f.member(3, f.ghost(of: "romeo"), .join)])) == [.dequeue(seq: 3)])
    }

    @Test func anXMPPTimeoutStopsTheDrainKeepsOrderAndRetriesAfterThePause() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let one = f.text(1, "one"), two = f.text(2, "two")
        // `two` is mapped but does not go out after `one` timed out: it waits in the map, like `one`.
        #expect(f.runTimedOut([one, two]) == [.schedule(.inboxRetry, at: f.t0 + .seconds(5))])
        // New events wait too.
        #expect(f.act(.matrixEvents([f.text(3)])) == [])
        let later = f.t0 + .seconds(5)
        #expect(f.act(.retryInbox, at: later) == [.loadUndelivered])
        // Both are mapped and unreceipted: resent first, in order, then the store's inbox (three).
        #expect(f.act(.undeliveredLoaded(f.undelivered([one, two])), at: later) == [.groupchat(f.outgoing(one, purpose: .resend))])
        #expect(f.act(.xmppDelivery(.groupchatSent(f.outgoing(one, purpose: .resend), nil)), at: later) == [.groupchat(f.outgoing(two, purpose: .resend))])
        #expect(f.act(.xmppDelivery(.groupchatSent(f.outgoing(two, purpose: .resend), nil)), at: later) == [.catchUp(.readInbox)])
        let three = f.text(3)
        #expect(f.act(.catchUp(.inboxRead([three])), at: later) == [.xmppDelivery(.insertMapping(f.mapping(three), consumingInbox: 3, delivery: f.outgoing(three)))])
    }

    @Test func aLostXMPPLinkStopsTheDrainUntilTheReconnect() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let one = f.text(1)
        _ = f.act(.matrixEvents([one]))
        _ = f.act(.xmppDelivery(.mappingInserted(f.outgoing(one), inserted: true)))
        #expect(f.act(.xmppDelivery(.groupchatSent(f.outgoing(one), .notConnected))) == [])
        #expect(f.machine.inboxBlocked)
        #expect(f.act(.retryInbox) == [.loadUndelivered])   // (a retry scheduled earlier still runs the resends)
    }

    @Test func aRefusedMessageIsReportedInTheRoomAndTheDrainGoesOn() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let one = f.text(1), two = f.text(2)
        _ = f.act(.matrixEvents([one, two]))
        _ = f.act(f.mapped([one, two], [true, true]))
        let originID = f.outgoing(one).originID
        #expect(f.act(.xmppDelivery(.groupchatSent(f.outgoing(one), .refused(StanzaErrorInfo(condition: "forbidden")))))
                == [.xmppDelivery(.markFailed(originID)), .xmppDelivery(.postNotice("⚠️ Alice's message could not be delivered to the XMPP room (forbidden).",
                                                      subject: "failed:\(originID.rawValue)")),
                    .groupchat(f.outgoing(two))])
    }

    @Test func aBounceSayingThePuppetIsGoneRejoinsAndResendsOnceOtherwiseTheSenderIsTold() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let one = f.text(1)
        let originID = f.outgoing(one).originID
        let error = StanzaErrorInfo(condition: "not-acceptable")
        let bounce = RoomMessage(room: f.muc, nick: "", to: f.puppetJID(f.alice), originID: originID, error: error)
        #expect(f.act(.xmppMessage(bounce)) == [.xmppDelivery(.lookUpOwnMessage(originID, error: error))])
        let resend = f.outgoing(one, purpose: .afterRefusal(error))
        let rejoin = f.puppetJoin(f.alice, "Alice", then: .send(resend))
        #expect(f.act(.xmppDelivery(.ownMessageFound(originID, mapping: f.mapping(one), error: error))) == [.puppets(.join(rejoin))])
        #expect(f.act(.puppets(.joinAnswered(rejoin, .joined(nick: "Alice", created: false)))) == [.puppets(.save(f.puppet(f.alice, "Alice"))), .groupchat(resend)])
        // A second refusal of the resend is told in the room.
        #expect(f.act(.xmppDelivery(.groupchatSent(resend, .refused(error))))
                == [.xmppDelivery(.markFailed(originID)), .xmppDelivery(.postNotice("⚠️ Alice's message could not be delivered to the XMPP room (not-acceptable).",
                                                      subject: "failed:\(originID.rawValue)"))])
        // Other conditions are told at once; a bounce of something already delivered is ignored.
        let forbidden = StanzaErrorInfo(condition: "forbidden", text: "muted")
        #expect(f.act(.xmppDelivery(.ownMessageFound(originID, mapping: f.mapping(one), error: forbidden)))
                == [.xmppDelivery(.markFailed(originID)), .xmppDelivery(.postNotice("⚠️ Alice's message could not be delivered to the XMPP room (forbidden: muted).",
                                                      subject: "failed:\(originID.rawValue)"))])
        var delivered = f.mapping(one)
        delivered.state = .delivered
        #expect(f.act(.xmppDelivery(.ownMessageFound(originID, mapping: delivered, error: forbidden))) == [])
    }

    /// A rate limit (an error of type `wait`): nobody is told it failed; the room's sends pause, and at the inbox's
    /// retry the refused message goes again first, then the inbox drains on.
    @Test func aBounceThatSaysWaitPausesTheRoomAndSendsTheMessageAgain() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let one = f.text(1)
        _ = f.act(.matrixEvents([one]))
        _ = f.act(.xmppDelivery(.mappingInserted(f.outgoing(one), inserted: true)))
        _ = f.act(.xmppDelivery(.groupchatSent(f.outgoing(one), nil)))
        let originID = f.outgoing(one).originID
        let limited = StanzaErrorInfo(condition: "resource-constraint", text: "Traffic rate limit is exceeded", retryLater: true)
        let bounce = RoomMessage(room: f.muc, nick: "", to: f.puppetJID(f.alice), originID: originID, error: limited)
        #expect(f.act(.xmppMessage(bounce)) == [.xmppDelivery(.lookUpOwnMessage(originID, error: limited))])
        let paused = f.act(.xmppDelivery(.ownMessageFound(originID, mapping: f.mapping(one), error: limited)))
        #expect(paused.last == .schedule(.inboxRetry, at: f.t0 + .seconds(5)), "\(paused)")
        #expect(!paused.contains { if case .xmppDelivery(.markFailed) = $0 { true } else { false } }, "not failed")
        #expect(f.act(.matrixEvents([f.text(2)])) == [], "later events wait in the inbox")
        #expect(f.act(.retryInbox) == [.loadUndelivered])
        #expect(f.act(.undeliveredLoaded([f.mapping(one)])) == [.groupchat(f.outgoing(one, purpose: .resend))])
    }

    @Test func eventsBehindAHoleInTheTransactionsWaitForATimelineCheckOthersGoStraightOut() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        #expect(f.act(.timelineGap) == [])
        let five = f.text(5)
        #expect(f.act(.matrixEvents([five])) == [.catchUp(.readTimeline)])
        let recovered = f.text(6, "stranded")
        // The check found a stranded message: it is queued, and goes first, in timeline order.
        #expect(f.act(.catchUp(.timelineRead(f.timelineRead([recovered, five], queuedThrough: 5, unseen: [recovered]))))
                == [.catchUp(.enqueueStranded([recovered.event]))])
        #expect(f.act(.catchUp(.strandedQueued(.done))) == [.catchUp(.readInbox)])
        #expect(f.act(.catchUp(.inboxRead([five, recovered]))) == [f.mapRun([recovered, five])])
        #expect(f.act(f.mapped([recovered, five], [true, false])) == [.groupchat(f.outgoing(recovered))])
        #expect(f.act(.xmppDelivery(.groupchatSent(f.outgoing(recovered), nil))) == [])
        let seven = f.text(7)
        #expect(f.act(.matrixEvents([seven])) == [.xmppDelivery(.insertMapping(f.mapping(seven), consumingInbox: 7, delivery: f.outgoing(seven)))])
    }

    @Test func aDrainThatCheckedTheTimelineFollowsItEvenWhenNothingWasRecovered() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        #expect(f.act(.checkTimeline) == [.catchUp(.readTimeline)])
        // `five` came in a transaction the homeserver delivered late, behind `six` and `seven`.
        let six = f.text(1, "six"), seven = f.text(2, "seven"), five = f.text(3, "five")
        #expect(f.act(.catchUp(.timelineRead(f.timelineRead([five, six, seven], queuedThrough: 3)))) == [.catchUp(.readInbox)])
        #expect(f.act(.catchUp(.inboxRead([six, seven, five]))) == [f.mapRun([five, six, seven])])
        #expect(f.act(f.mapped([five, six, seven], [true, true, true])) == [.groupchat(f.outgoing(five))])
        #expect(f.act(.xmppDelivery(.groupchatSent(f.outgoing(five), nil))) == [.groupchat(f.outgoing(six))])
    }

    /// Seen in FailoverTests on Prosody: the first drain of an instance being stopped found its timeline check cut
    /// short, went on in arrival order without the message of a held transaction, and mapped the next one; the
    /// instance that took over resent that one first, ahead of the held message.
    @Test func aTimelineCheckCutShortByShutdownHoldsTheDrainUntilACheckHappens() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        #expect(f.act(.timelineGap) == [])
        let eight = f.text(2, "eight")
        #expect(f.act(.matrixEvents([eight])) == [.catchUp(.readTimeline)])
        #expect(f.act(.catchUp(.timelineRead(nil))) == [.schedule(.inboxRetry, at: f.t0 + .seconds(5))])
        #expect(f.machine.catchUp.timelineCheckPending && f.machine.inboxBlocked)
        let later = f.t0 + .seconds(5)
        #expect(f.act(.retryInbox, at: later) == [.loadUndelivered])
        #expect(f.act(.undeliveredLoaded([]), at: later) == [.catchUp(.readTimeline)])
        let seven = f.text(3, "seven")
        #expect(f.act(.catchUp(.timelineRead(f.timelineRead([seven, eight], queuedThrough: 3))), at: later) == [.catchUp(.readInbox)])
        #expect(f.act(.catchUp(.inboxRead([eight, seven])), at: later) == [f.mapRun([seven, eight])])
    }

    @Test func strandedMessagesNotQueuedMakeTheNextDrainCheckAgainAndShutdownHoldsThisOne() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let five = f.text(5), stranded = f.text(6, "stranded")
        #expect(f.act(.checkTimeline) == [.catchUp(.readTimeline)])
        #expect(f.act(.catchUp(.timelineRead(f.timelineRead([stranded, five], queuedThrough: 5, unseen: [stranded])))) == [.catchUp(.enqueueStranded([stranded.event]))])
        #expect(f.act(.catchUp(.strandedQueued(.failed))) == [.catchUp(.readInbox)])
        #expect(f.machine.catchUp.timelineCheckPending)
        #expect(f.act(.catchUp(.inboxRead([]))) == [])
        #expect(f.act(.checkTimeline) == [.catchUp(.readTimeline)])
        _ = f.act(.catchUp(.timelineRead(f.timelineRead([stranded, five], queuedThrough: 5, unseen: [stranded]))))
        #expect(f.act(.catchUp(.strandedQueued(.cancelled))) == [.schedule(.inboxRetry, at: f.t0 + .seconds(5))])
        #expect(f.machine.catchUp.timelineCheckPending && f.machine.inboxBlocked)
    }

    @Test func aBackgroundTimelineCheckDrainsTheStoreOnlyWhileMessagesCanGoOut() {
        var f = MachineFixture()
        f.activate()
        #expect(f.act(.checkTimeline) == [.catchUp(.readTimeline)])
        _ = f.act(.catchUp(.inboxRead([])))
        _ = f.act(.xmppDisconnected)
        #expect(f.act(.checkTimeline) == [])
        #expect(f.machine.catchUp.timelineCheckPending)
    }

    @Test func aStoreThatCannotMapAMessagePausesTheInbox() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let one = f.text(1)
        _ = f.act(.matrixEvents([one]))
        #expect(f.act(.xmppDelivery(.mappingInserted(f.outgoing(one), inserted: nil))) == [.schedule(.inboxRetry, at: f.t0 + .seconds(5))])
    }
}
