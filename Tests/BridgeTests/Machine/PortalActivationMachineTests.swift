@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing

/// Activation, catch-up, resends, self-check and unlink as literal sequences of the portal machine.
@Suite struct PortalActivationMachineTests {
    @Test func activationJoinsBothSidesCatchesUpSyncsPuppetsResendsThenDrainsWithATimelineCheck() {
        var f = MachineFixture()
        #expect(f.act(.activate) == [.bot(.joinMatrix)])
        #expect(f.act(.botJoinedMatrix(error: nil)) == [.bot(.joinMUC(f.botJoin))])
        #expect(f.act(.botJoinedMUC(f.botJoin, .joined(nick: "Matrix", created: true))) == [.catchUp(.readRoomFeatures)])
        let features = RoomFeatures(stanzaIDs: true, archive: true)
        #expect(f.act(.catchUp(.featuresRead(features))) == [.catchUp(.recordRoomFeatures(features)), .loadRoom])
        #expect(f.act(.roomLoaded(f.snapshot(last: StanzaID("s9")!))) == [.catchUp(.fetchArchive(after: StanzaID("s9")!, since: nil))])
        let archived = f.groupchat("romeo", "while away", stanzaID: "s10", archived: true)
        #expect(f.act(.catchUp(.archiveFetched([archived]))) == [.matrixDelivery(.lookUpBridged(archived))])
        #expect(f.act(.matrixDelivery(.lookedUp(archived, bridged: true))) == [.puppets(.fetchMembers)])
        let join = f.puppetJoin(f.alice, "Alice", then: .sync)
        #expect(f.act(.puppets(.membersFetched([f.alice: "Alice", f.bot: nil]))) == [.puppets(.join(join))])
        #expect(f.act(.puppets(.joinAnswered(join, .joined(nick: "Alice", created: false)))) == [.puppets(.save(f.puppet(f.alice, "Alice"))), .loadUndelivered])
        #expect(f.act(.undeliveredLoaded([]))
                == [.ghosts(.queueReconciliation), .roomState(.setBridgeInfo(f.bridgeInfo)), .setStatus(.active, detail: nil), .catchUp(.readTimeline)])
        #expect(f.act(.catchUp(.inboxRead([]))) == [])
        #expect(f.machine.botJoined && f.machine.canSend)
    }

    /// A take-over stopped by SIGTERM while catching up: a wait cancelled by the shutdown never gave its outcome, so
    /// the activation's steps stayed on the agenda and the next event continued them. That event must not start a
    /// drain ahead of them: newer Matrix messages went out before the resend of an older unreceipted one, which the
    /// next run then delivered late.
    @Test func matrixEventsDuringAnActivationThatStalledWaitForItsResends() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let zero = f.text(1, "zero"), one = f.text(2, "one")
        _ = f.act(.xmppDisconnected)
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        _ = f.act(.botJoinedMUC(f.botJoin, .joined(nick: "Matrix", created: false)))
        _ = f.act(.catchUp(.featuresRead(RoomFeatures(stanzaIDs: true, archive: true))))
        #expect(f.act(.roomLoaded(f.snapshot(last: StanzaID("s9")!))) == [.catchUp(.fetchArchive(after: StanzaID("s9")!, since: nil))])
        // The archive's answer never comes; a Matrix event arrives: the activation goes on, the event waits.
        #expect(f.act(.matrixEvents([one])) == [.puppets(.fetchMembers)])
        #expect(!f.machine.canSend)
        let rejoin = f.puppetJoin(f.alice, "Alice", then: .sync)
        #expect(f.act(.puppets(.membersFetched([f.alice: "Alice"]))) == [.puppets(.join(rejoin))])
        #expect(f.act(.puppets(.joinAnswered(rejoin, .joined(nick: "Alice", created: false)))) == [.puppets(.save(f.puppet(f.alice, "Alice"))), .loadUndelivered])
        var unreceipted = f.mapping(zero)
        unreceipted.seq = 1
        #expect(f.act(.undeliveredLoaded([unreceipted])) == [.groupchat(f.outgoing(zero, purpose: .resend))])
        #expect(f.act(.xmppDelivery(.groupchatSent(f.outgoing(zero, purpose: .resend), nil)))
                == [.ghosts(.queueReconciliation), .setStatus(.active, detail: nil), .catchUp(.readTimeline)])
        #expect(f.act(.catchUp(.inboxRead([one]))) == [.xmppDelivery(.insertMapping(f.mapping(one), consumingInbox: 2, delivery: f.outgoing(one)))])
    }

    @Test func aRoomWithoutAnArchiveIsSaidToBeOneAndNotCaughtUp() {
        var f = MachineFixture()
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        #expect(f.act(.botJoinedMUC(f.botJoin, .joined(nick: "Matrix", created: false))) == [.catchUp(.readRoomFeatures)])
        let features = RoomFeatures(stanzaIDs: false, archive: false)
        #expect(f.act(.catchUp(.featuresRead(features))) == [.catchUp(.recordRoomFeatures(features)), .loadRoom])
        // A resume point is known, but there is no archive to read it from.
        #expect(f.act(.roomLoaded(f.snapshot(last: StanzaID("s9")!))) == [.puppets(.fetchMembers)])
    }

    @Test func aRoomWithoutAnArchiveIsLoggedAtActivation() {
        var f = MachineFixture()
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        _ = f.act(.botJoinedMUC(f.botJoin, .joined(nick: "Matrix", created: false)))
        let logs = f.machine.receive(.catchUp(.featuresRead(RoomFeatures(stanzaIDs: true, archive: false))), now: f.t0).compactMap {
            if case .catchUp(.log(let entry)) = $0 { entry } else { nil }
        }
        #expect(logs.map(\.level) == [.notice])
        #expect(logs.first?.message.contains("cannot be caught up") == true)
    }

    @Test func whenDiscoFailsTheLastKnownFeaturesStand() {
        var f = MachineFixture()
        f.activate(features: RoomFeatures(stanzaIDs: false, archive: false))
        _ = f.act(.botJoinedMUC(f.botJoin, .joined(nick: "Matrix", created: false)))
        let actions = f.act(.catchUp(.featuresRead(nil)))
        #expect(actions.last == .loadRoom)
        #expect(f.machine.roomFeatures == RoomFeatures(stanzaIDs: false, archive: false))
    }

    @Test func theFirstActivationBridgesNothingFromBeforeTheLink() {
        var f = MachineFixture()
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        _ = f.act(.botJoinedMUC(f.botJoin, .joined(nick: "Matrix", created: false)))
        #expect(f.act(.roomLoaded(f.snapshot(first: true))) == [.puppets(.fetchMembers)])
    }

    @Test func withoutAResumePointTheArchiveIsReadFromTheLinksActivationOrTheOldestUnreceiptedMessage() {
        let activeSince = Date(timeIntervalSince1970: 1_000_000)
        var pending = MessageMapping(room: MachineFixture().room, eventID: EventID("$p")!, stanzaID: nil, originID: OriginID("o1")!,
                                     direction: .matrixToXMPP, sender: .matrix(UserID("@alice:localhost")!), state: .sending, body: "hi")
        pending.createdAt = activeSince.addingTimeInterval(60)
        let f = MachineFixture()
        #expect(CatchUpMachine.catchUpQuery(f.snapshot(activeSince: activeSince))! == (nil, activeSince.addingTimeInterval(-2)))
        pending.createdAt = activeSince.addingTimeInterval(200)
        #expect(CatchUpMachine.catchUpQuery(f.snapshot(undelivered: [pending], activeSince: activeSince))! == (nil, activeSince.addingTimeInterval(-2)))
        pending.createdAt = activeSince.addingTimeInterval(60)
        #expect(CatchUpMachine.catchUpQuery(f.snapshot(first: true, undelivered: [pending]))! == (nil, activeSince.addingTimeInterval(-60)))
        #expect(CatchUpMachine.catchUpQuery(f.snapshot()) == nil)
    }

    @Test func anUnreceiptedMessageIsResentOnlyWhenTheArchiveLacksIt() {
        var f = MachineFixture()
        let queued = f.text(1)
        var mapping = f.mapping(queued)
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        _ = f.act(.botJoinedMUC(f.botJoin, .joined(nick: "Matrix", created: false)))
        let stored = f.puppet(f.alice, "Alice", joined: false)
        #expect(f.act(.roomLoaded(f.snapshot(last: StanzaID("s1")!, puppets: [stored], undelivered: [mapping])))
                == [.catchUp(.fetchArchive(after: StanzaID("s1")!, since: nil))])
        // The archive has our reflection: it is the receipt.
        let reflection = f.groupchat("Alice", "hi", stanzaID: "s2", originID: mapping.originID!.rawValue, archived: true)
        #expect(f.act(.catchUp(.archiveFetched([reflection]))) == [.matrixDelivery(.recordReflection(originID: mapping.originID, stanzaID: StanzaID("s2"))),
                                                           .puppets(.fetchMembers)])
        let join = f.puppetJoin(f.alice, "Alice", then: .sync)
        #expect(f.act(.puppets(.membersFetched([f.alice: "Alice"]))) == [.puppets(.join(join))])
        #expect(f.act(.puppets(.joinAnswered(join, .joined(nick: "Alice", created: false)))).last == .loadUndelivered)
        // Nothing left unreceipted: nothing is resent.
        #expect(f.act(.undeliveredLoaded([])).last == .catchUp(.readTimeline))

        // Another start where the archive lacks it: resent from the map, by the same puppet, with the same origin-id.
        var g = MachineFixture()
        _ = g.act(.activate)
        _ = g.act(.botJoinedMatrix(error: nil))
        _ = g.act(.botJoinedMUC(g.botJoin, .joined(nick: "Matrix", created: false)))
        _ = g.act(.roomLoaded(g.snapshot(last: StanzaID("s1")!, undelivered: [mapping])))
        _ = g.act(.catchUp(.archiveFetched([])))
        let gJoin = g.puppetJoin(g.alice, "Alice", then: .sync)
        _ = g.act(.puppets(.membersFetched([g.alice: "Alice"])))
        _ = g.act(.puppets(.joinAnswered(gJoin, .joined(nick: "Alice", created: false))))
        mapping.seq = 7
        #expect(g.act(.undeliveredLoaded([mapping])) == [.groupchat(g.outgoing(queued, purpose: .resend))])
        #expect(g.act(.xmppDelivery(.groupchatSent(g.outgoing(queued, purpose: .resend), nil))).last == .catchUp(.readTimeline))
    }

    @Test func aResendThatCannotGoOutPausesTheInboxAndStopsTheOtherResends() {
        var f = MachineFixture()
        let one = f.mapping(f.text(1)), two = f.mapping(f.text(2))
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        _ = f.act(.botJoinedMUC(f.botJoin, .joined(nick: "Matrix", created: false)))
        _ = f.act(.roomLoaded(f.snapshot(puppets: [f.puppet(f.alice, "Alice")])))
        _ = f.act(.puppets(.membersFetched([:])))
        let resend = f.outgoing(f.text(1), purpose: .resend)
        let join = f.puppetJoin(f.alice, "Alice", then: .send(resend))
        #expect(f.act(.undeliveredLoaded([one, two])) == [.puppets(.join(join))])
        #expect(f.act(.puppets(.joinFailed(join, .timeout)))
                == [.ghosts(.queueReconciliation), .schedule(.inboxRetry, at: f.t0 + .seconds(5)), .roomState(.setBridgeInfo(f.bridgeInfo)),
                    .setStatus(.active, detail: nil)])
        #expect(f.act(.matrixEvents([f.text(3)])) == [])
        // The retry resends first, then drains the store.
        #expect(f.act(.retryInbox, at: f.t0 + .seconds(5)) == [.loadUndelivered])
        #expect(f.act(.undeliveredLoaded([]), at: f.t0 + .seconds(5)) == [.catchUp(.readTimeline)])
    }

    @Test func theBridgesNickIsTakenTenTimesAtMost() {
        var f = MachineFixture()
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        var join = f.botJoin
        for attempt in 1..<10 {
            let next = PortalStateMachine.BotJoin(nick: "Matrix \(attempt + 1)", occupant: f.naming.botOccupant, attempt: attempt)
            #expect(f.act(.botJoinedMUC(join, .nickConflict)) == [.bot(.joinMUC(next))])
            join = next
        }
        #expect(f.act(.botJoinedMUC(join, .nickConflict)) == [.setStatus(.error, detail: "every nick tried for the bridge is taken in the XMPP room")])
        #expect(!f.machine.botJoined)
    }

    @Test func aRefusalOrAFailedBotJoinIsTheLinksError() {
        var f = MachineFixture()
        _ = f.act(.activate)
        #expect(f.act(.botJoinedMatrix(error: .refused("M_FORBIDDEN"))) == [.setStatus(.error, detail: "the bridge bot cannot join the Matrix room: M_FORBIDDEN")])
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        #expect(f.act(.botJoinedMUC(f.botJoin, .notAllowed(StanzaError(type: .auth, condition: .forbidden, text: "members only"))))
                == [.setStatus(.error, detail: "the XMPP room refused the bridge: forbidden (members only)")])
        #expect(f.act(.matrixEvents([f.text(1)])) == [])
        #expect(f.machine.inboxNeedsReload)
    }

    /// A members-only room refused the bridge; its owner then invites it (mediated, or XEP-0249 to the account): it
    /// joins again at once. An invitation while it is in the room, or while the XMPP link is down, changes nothing.
    @Test func anInvitationAfterARefusalJoinsAgainAndOtherwiseChangesNothing() {
        var f = MachineFixture()
        let invite = RoomInvite(room: f.muc, invitee: f.naming.botOccupant.bare, inviter: JID("owner@montague.example")!, reason: nil)
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        _ = f.act(.botJoinedMUC(f.botJoin, .notAllowed(StanzaError(type: .auth, condition: .registrationRequired, text: "members only"))))
        #expect(f.act(.xmppInvite(invite)) == [.bot(.joinMatrix)])
        f.activate()
        #expect(f.machine.botJoined)
        #expect(f.act(.xmppInvite(invite)) == [], "already in the room")
        _ = f.act(.xmppDisconnected)
        #expect(f.act(.xmppInvite(invite)) == [], "the reconnection joins")
    }

    @Test func theSelfCheckDrainsWithATimelineCheckSyncsPuppetsAndPings() {
        var f = MachineFixture()
        f.activate()
        #expect(f.act(.selfCheck) == [.catchUp(.readTimeline)])
        #expect(f.act(.catchUp(.inboxRead([]))) == [.puppets(.fetchMembers)])
        #expect(f.act(.puppets(.membersFetched([:]))) == [.bot(.selfPing(nick: "Matrix"))])
        #expect(f.act(.selfPinged(.joined)) == [])
        // A room that dropped us: rejoin from the start.
        _ = f.act(.selfCheck)
        _ = f.act(.catchUp(.inboxRead([])))
        _ = f.act(.puppets(.membersFetched([:])))
        #expect(f.act(.selfPinged(.notJoined(StanzaError(type: .cancel, condition: .notAcceptable)))) == [.bot(.joinMatrix)])
    }

    @Test func theSelfCheckBringsPuppetsInLineWithTheMembers() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        _ = f.act(.selfCheck)
        _ = f.act(.catchUp(.inboxRead([])))
        // Alice left and Bob joined, and neither event arrived.
        let join = f.puppetJoin(f.bob, "Bob", then: .sync)
        #expect(f.act(.puppets(.membersFetched([f.bob: "Bob"]))) == [.puppets(.join(join))])
        #expect(f.act(.puppets(.joinAnswered(join, .joined(nick: "Bob", created: false))))
                == [.puppets(.save(f.puppet(f.bob, "Bob"))), .puppets(.leave(nick: "Alice", occupant: f.puppetJID(f.alice), status: nil)),
                    .puppets(.delete(f.alice)), .bot(.selfPing(nick: "Matrix"))])
    }

    @Test func whileTheXMPPLinkIsDownNothingIsSentAndTheNextActivationReadsTheStore() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        #expect(f.act(.xmppDisconnected) == [.setStatus(.pending, detail: "waiting for the XMPP server")])
        #expect(f.machine.puppets[f.alice]?.joined == false)
        #expect(f.act(.matrixEvents([f.text(1)])) == [])
        #expect(f.act(.retryInbox) == [])
        #expect(f.act(.selfCheck) == [])
        #expect(f.act(.checkTimeline) == [])
        #expect(f.act(.activate) == [.bot(.joinMatrix)])
    }

    @Test func unlinkTakesEveryJoinedOccupantOfOursOutAndEndsThePortal() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice", f.bob: "Bob"])
        #expect(f.act(.unlink(xmppConnected: true))
                == [.roomState(.setBridgeInfo(f.bridgeInfoWithdrawn)),
                    .unlink(.init(ghosts: [], puppets: [f.puppet(f.alice, "Alice"), f.puppet(f.bob, "Bob")], botNick: "Matrix",
                                  ghostLevels: GhostPowerLevels(wanted: [:])))])
        #expect(f.machine.closed)
        #expect(f.act(.activate) == [])
        #expect(f.act(.matrixEvents([f.text(1)])) == [])
        #expect(f.act(.xmppMessage(f.groupchat("romeo", "late"))) == [])
    }

    @Test func aPortalLoadedOnlyToUnlinkWhileXMPPIsDownLeavesOnlyMatrix() {
        var f = MachineFixture()
        // Never loaded: the ghosts to take out are read first (only the joined ones leave).
        #expect(f.act(.unlink(xmppConnected: false)) == [.ghosts(.readForUnlink(connected: false))])
        let ghosts = [RoomGhost(room: f.room, user: f.ghost(of: "romeo"), nick: "romeo", occupantID: nil, realJID: nil, joined: true),
                      RoomGhost(room: f.room, user: f.ghost(of: "juliet"), nick: "juliet", occupantID: nil, realJID: nil, joined: false)]
        #expect(f.act(.ghosts(.readForUnlink(ghosts, connected: false)))
                == [.roomState(.setBridgeInfo(f.bridgeInfoWithdrawn)),
                    .unlink(.init(ghosts: [f.ghost(of: "romeo")], puppets: [], botNick: nil, ghostLevels: GhostPowerLevels(wanted: [:])))])
        #expect(f.machine.closed)
    }

    @Test func ghostsOfOccupantsThatAreGoneLeaveAfterTheJoin() {
        var f = MachineFixture()
        let romeo = f.ghost(of: "romeo"), juliet = f.ghost(of: "juliet")
        let stored = [RoomGhost(room: f.room, user: romeo, nick: "romeo", occupantID: nil, realJID: nil, joined: true),
                      RoomGhost(room: f.room, user: juliet, nick: "juliet", occupantID: nil, realJID: nil, joined: true)]
        f.activate(snapshot: f.snapshot(ghosts: stored))
        // Romeo is still there (no churn); Juliet left while we were away.
        #expect(f.act(.xmppPresence(f.presence("romeo"))) == [])
        var left = stored[1]
        left.joined = false
        // The occupant list is complete: the ghosts' power levels are brought in line once (here: none wanted).
        #expect(f.act(.reconcileGhosts) == [.ghosts(.remove(juliet, .leave, saving: left)), .roles(.applyGhostPowerLevels(GhostPowerLevels(wanted: [:])))])
        _ = f.act(.roles(.powerLevelsApplied(GhostPowerLevels(wanted: [:]), .unchanged)))
        #expect(f.act(.reconcileGhosts) == [])
    }
}
