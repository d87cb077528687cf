@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing

/// Subject ↔ topic, the MUC name, the MUC's destruction and room upgrades through the portal machine.
@Suite struct PortalRoomStateMachineTests {
    typealias TopicChange = RoomStateMachine.TopicChange
    typealias SubjectChange = RoomStateMachine.SubjectChange

    /// An active machine that knows `subject` and has a joined ghost for the occupant "romeo".
    func active(subject: String? = "Old", syncName: Bool = false, name: String? = nil,
                features: RoomFeatures = RoomFeatures(stanzaIDs: true, archive: true)) -> MachineFixture {
        var f = MachineFixture()
        var configuration = f.machine.configuration
        configuration.syncName = syncName
        f.machine = PortalStateMachine(configuration: configuration)
        var snapshot = f.snapshot(ghosts: [RoomGhost(room: f.room, user: f.ghost(of: "romeo"), nick: "romeo", occupantID: nil,
                                                     realJID: nil, joined: true)])
        snapshot.texts = RoomTexts(subject: subject, name: name)
        f.activate(members: [f.alice: "Alice"], snapshot: snapshot, features: features)
        #expect(f.act(.xmppPresence(f.presence("romeo"))) == [])
        return f
    }

    func subject(_ nick: String, _ text: String, archived: Bool = false) -> RoomMessage {
        var message = MachineFixture().groupchat(nick, "", stanzaID: nil, archived: archived)
        message.body = nil
        message.subject = text
        return message
    }

    func topic(_ seq: Int64, _ text: String, from sender: UserID? = nil) -> QueuedMatrixEvent {
        let f = MachineFixture()
        return QueuedMatrixEvent(seq: seq, event: MatrixRoomEvent(eventID: EventID("$t\(seq)")!, room: f.room, sender: sender ?? f.alice,
                                                                  stateKey: "", content: .topic(text)))
    }

    // MARK: XMPP → Matrix

    @Test func anOccupantsSubjectChangeBecomesTheTopicSetByTheirGhostThenIsRecorded() {
        var f = active()
        let change = TopicChange(text: "New", actor: f.ghost(of: "romeo"), setter: "romeo")
        #expect(f.act(.xmppMessage(subject("romeo", "New"))) == [.roomState(.setMatrixTopic(change))])
        #expect(f.act(.roomState(.topicSet(change, nil))) == [.roomState(.recordSubject("New"))])
        // The same subject again (sent on the next join): not a change.
        #expect(f.act(.xmppMessage(subject("romeo", "New"))) == [])
        #expect(f.machine.roomState.texts?.subject == "New")
    }

    @Test func aGhostWithoutThePowerHandsOverToTheBotWhichSaysWhoChangedIt() {
        var f = active()
        let byGhost = TopicChange(text: "New", actor: f.ghost(of: "romeo"), setter: "romeo")
        let byBot = TopicChange(text: "New", actor: f.bot, setter: "romeo")
        _ = f.act(.xmppMessage(subject("romeo", "New")))
        #expect(f.act(.roomState(.topicSet(byGhost, .refused("M_FORBIDDEN")))) == [.roomState(.setMatrixTopic(byBot))])
        #expect(f.act(.roomState(.topicSet(byBot, nil))) == [.roomState(.recordSubject("New")),
                                                   .roomState(.postNotice("romeo changed the XMPP room's subject.", subject: "subject:romeo:New"))])
    }

    @Test func aSubjectFromTheRoomItselfIsSetByTheBotWithoutANotice() {
        var f = active()
        let change = TopicChange(text: "By the room", actor: f.bot, setter: nil)
        #expect(f.act(.xmppMessage(subject("", "By the room"))) == [.roomState(.setMatrixTopic(change))])
        #expect(f.act(.roomState(.topicSet(change, nil))) == [.roomState(.recordSubject("By the room"))])
    }

    @Test func anUnavailableHomeserverLeavesTheSubjectUnrecordedSoTheNextJoinAppliesIt() {
        var f = active()
        let change = TopicChange(text: "New", actor: f.ghost(of: "romeo"), setter: "romeo")
        _ = f.act(.xmppMessage(subject("romeo", "New")))
        #expect(f.act(.roomState(.topicSet(change, .unavailable("down")))) == [])
        #expect(f.machine.roomState.texts?.subject == "Old")
        #expect(f.act(.xmppMessage(subject("romeo", "New"))) == [.roomState(.setMatrixTopic(change))])
    }

    @Test func archivedSubjectsAndOurOwnReflectionsAreNotChanges() {
        var f = active()
        #expect(f.act(.xmppMessage(subject("romeo", "Ancient", archived: true))) == [])
        // Alice's puppet (nick "Alice") set it: our own change reflected, recorded, not sent back.
        #expect(f.act(.xmppMessage(subject("Alice", "From Matrix"))) == [.roomState(.recordSubject("From Matrix"))])
        #expect(f.act(.xmppMessage(subject("Matrix", "From the bridge"))) == [.roomState(.recordSubject("From the bridge"))])
    }

    @Test func withNothingKnownAnEmptyJoinSubjectIsRecordedAndNotApplied() {
        var f = active(subject: nil)
        #expect(f.act(.xmppMessage(subject("", ""))) == [.roomState(.recordSubject(""))])
        // A real subject when nothing is known is applied.
        var g = active(subject: nil)
        #expect(g.act(.xmppMessage(subject("", "Hello"))) == [.roomState(.setMatrixTopic(TopicChange(text: "Hello", actor: g.bot, setter: nil)))])
    }

    @Test func aSubjectWithABodyIsAMessageNotASubjectChange() {
        var f = active()
        var message = f.groupchat("romeo", "hello")
        message.subject = "Not a change"
        guard case .matrixDelivery(.lookUpBridged)? = f.act(.xmppMessage(message)).last else {
            Issue.record("not bridged as a message")
            return
        }
    }

    // MARK: Matrix → XMPP

    @Test func aMatrixTopicChangeIsSentByThePuppetAndItsRowHandledOnceSent() {
        var f = active()
        let event = topic(1, "From Matrix")
        let change = SubjectChange(text: "From Matrix", user: f.alice, eventID: event.event.eventID,
                                   id: f.naming.originID(for: event.event.eventID), seq: 1)
        #expect(f.act(.matrixEvents([event])) == [.roomState(.sendSubject(change, from: f.puppetJID(f.alice)))])
        #expect(f.machine.roomState.pendingSubject == change)
        #expect(f.act(.roomState(.subjectSent(change, nil))) == [.roomState(.dequeue(seq: 1))])
        #expect(f.act(.xmppMessage(subject("Alice", "From Matrix"))) == [.roomState(.recordSubject("From Matrix"))])
        #expect(f.machine.roomState.pendingSubject == nil)
    }

    @Test func aTopicEqualToTheKnownSubjectOrFromTheBridgeIsNotSent() {
        var f = active()
        #expect(f.act(.matrixEvents([topic(1, "Old")])) == [.roomState(.dequeue(seq: 1))])
        #expect(f.act(.matrixEvents([topic(2, "Echo", from: f.bot)])) == [.roomState(.dequeue(seq: 2))])
        #expect(f.act(.matrixEvents([topic(3, "Echo", from: f.ghost(of: "romeo"))])) == [.roomState(.dequeue(seq: 3))])
    }

    @Test func aForbiddenSubjectChangeIsRetriedByTheBridgesOccupantThenExplained() {
        var f = active()
        let event = topic(1, "From Matrix")
        let change = SubjectChange(text: "From Matrix", user: f.alice, eventID: event.event.eventID,
                                   id: f.naming.originID(for: event.event.eventID), seq: 1)
        _ = f.act(.matrixEvents([event]))
        _ = f.act(.roomState(.subjectSent(change, nil)))
        var bounce = f.groupchat("Alice", "", stanzaID: nil, to: f.puppetJID(f.alice))
        bounce.body = nil
        bounce.id = StanzaAttributeID(change.id.rawValue)
        bounce.error = StanzaErrorInfo(condition: .forbidden, text: "You are not allowed to change the subject")
        var retry = change
        retry.byBridge = true
        retry.seq = nil
        retry.id = OriginID(change.id.rawValue + "-bridge")!
        #expect(f.act(.xmppMessage(bounce)) == [.roomState(.sendSubject(retry, from: f.naming.botOccupant))])
        #expect(f.act(.roomState(.subjectSent(retry, nil))) == [])
        // Had the room taken it from the bridge's occupant, the MUC would be told who changed it, by her nick there.
        var accepted = f
        #expect(accepted.act(.xmppMessage(subject("Matrix", "From Matrix"))) == [.roomState(.recordSubject("From Matrix")),
                                                                               .roomState(.announceInMUC("Alice changed the subject.",
                                                                                              originID: OriginID(retry.id.rawValue + "-announce")!))])
        // The bridge's occupant is refused too: Alice is told why, in the Matrix room.
        var second = bounce
        second.to = f.naming.botOccupant
        second.id = StanzaAttributeID(retry.id.rawValue)
        #expect(f.act(.xmppMessage(second)) == [.roomState(.postNotice(
            "⚠️ Alice's topic change was not applied to the XMPP room (only its moderators may change the subject there).",
            subject: "subject-refused:$t1"))])
        #expect(f.machine.roomState.pendingSubject == nil)
    }

    @Test func aSubjectThatCannotGoOutWaitsForTheXMPPSideOrIsExplained() {
        var f = active()
        let event = topic(1, "From Matrix")
        let change = SubjectChange(text: "From Matrix", user: f.alice, eventID: event.event.eventID,
                                   id: f.naming.originID(for: event.event.eventID), seq: 1)
        _ = f.act(.matrixEvents([event]))
        // Not connected: the row stays for the next drain (no dequeue).
        #expect(f.act(.roomState(.subjectSent(change, .notConnected))) == [])
        #expect(f.machine.inboxBlocked)
        var g = active()
        _ = g.act(.matrixEvents([event]))
        let refused = PortalStateMachine.XMPPFailure.other("broken")
        #expect(g.act(.roomState(.subjectSent(change, refused))) == [
            .roomState(.postNotice("⚠️ Alice's topic change was not applied to the XMPP room (broken).", subject: "subject-refused:$t1")),
            .roomState(.dequeue(seq: 1))])
    }

    // MARK: Name

    @Test func withSyncNameTheMUCsNameIsCopiedWhenItDiffersFromTheOneCopiedLast() {
        var f = active(syncName: true, name: "Old name", features: RoomFeatures(stanzaIDs: true, archive: true, name: "Lounge"))
        #expect(f.machine.roomState.texts?.name == "Lounge")
        // Status 104 from the room: disco#info is read again; an unchanged name is not set again.
        var notice = f.groupchat("", "", stanzaID: nil)
        notice.body = nil
        notice.statusCodes = [.configurationChanged]
        #expect(f.act(.xmppMessage(notice)) == [.catchUp(.readRoomFeatures)])
        #expect(f.act(.catchUp(.featuresRead(RoomFeatures(stanzaIDs: true, archive: true, name: "Lounge"))))
                == [.catchUp(.recordRoomFeatures(RoomFeatures(stanzaIDs: true, archive: true, name: "Lounge")))])
        #expect(f.act(.xmppMessage(notice)) == [.catchUp(.readRoomFeatures)])
        let renamed = RoomFeatures(stanzaIDs: true, archive: true, name: "Salon")
        #expect(f.act(.catchUp(.featuresRead(renamed))) == [.catchUp(.recordRoomFeatures(renamed)), .roomState(.setMatrixRoomName("Salon"))])
    }

    @Test func activationCopiesTheNameOnceTheRoomsStateIsLoaded() {
        var f = MachineFixture()
        var configuration = f.machine.configuration
        configuration.syncName = true
        f.machine = PortalStateMachine(configuration: configuration)
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        _ = f.act(.botJoinedMUC(f.botJoin, .joined(nick: "Matrix", created: false)))
        let features = RoomFeatures(stanzaIDs: true, archive: true, name: "Lounge")
        // Before the room's state is loaded the name copied last is not known: nothing yet.
        #expect(f.act(.catchUp(.featuresRead(features))) == [.catchUp(.recordRoomFeatures(features)), .loadRoom])
        var snapshot = f.snapshot(first: true)
        snapshot.texts = RoomTexts(subject: nil, name: "Old")
        #expect(f.act(.roomLoaded(snapshot)).first == .roomState(.setMatrixRoomName("Lounge")))
    }

    @Test func withoutSyncNameTheNameIsLeftAlone() {
        var f = active(features: RoomFeatures(stanzaIDs: true, archive: true, name: "Lounge"))
        var notice = f.groupchat("", "", stanzaID: nil)
        notice.body = nil
        notice.statusCodes = [.configurationChanged]
        // disco#info is read again (the room's avatar may have changed), but the name is not copied.
        #expect(f.act(.xmppMessage(notice)) == [.catchUp(.readRoomFeatures)])
        #expect(f.act(.catchUp(.featuresRead(RoomFeatures(stanzaIDs: true, archive: true, name: "Salon"))))
                == [.catchUp(.recordRoomFeatures(RoomFeatures(stanzaIDs: true, archive: true, name: "Salon")))])
    }

    // MARK: Destruction

    @Test func aDestroyedMUCPutsTheLinkInErrorNamesTheVenueAndIsNotRejoined() {
        var f = active()
        var gone = f.presence("Matrix", available: false, codes: [.selfPresence])
        gone.destroyed = RoomDestruction(reason: "Moved", alternateVenue: JID("salon@conference.localhost")!)
        #expect(f.act(.xmppPresence(gone)) == [
            .roomState(.recordDestruction(detail: "the XMPP room was destroyed: Moved; alternate venue xmpp:salon@conference.localhost?join")),
            .roomState(.postNotice("⚠️ The XMPP room was destroyed (reason: Moved). This room is no longer bridged. The conversation continues at xmpp:salon@conference.localhost?join",
                        subject: "destroyed:lounge@conference.localhost"))])
        #expect(f.machine.destroyed)
        // The other occupants' destroy presences: their ghosts leave; the bridge's copy again: nothing more.
        var romeo = f.presence("romeo", available: false)
        romeo.destroyed = gone.destroyed
        guard case .ghosts(.remove(let ghost, .leave, _))? = f.act(.xmppPresence(romeo)).first else {
            Issue.record("ghost did not leave")
            return
        }
        #expect(ghost == f.ghost(of: "romeo"))
        #expect(f.act(.xmppPresence(gone)) == [])
        // Reconnecting does not join again (that would create the room anew).
        #expect(f.act(.xmppDisconnected) == [])
        #expect(f.act(.activate) == [])
    }

    @Test func aLinkRecordedAsDestroyedIsNotActivatedAfterARestart() {
        var f = MachineFixture()
        var configuration = f.machine.configuration
        configuration.mucDestroyed = true
        f.machine = PortalStateMachine(configuration: configuration)
        #expect(f.act(.activate) == [])
        #expect(f.act(.selfCheck) == [])
        // Unlinking still works.
        #expect(f.act(.unlink(xmppConnected: true)) == [.ghosts(.readForUnlink(connected: true))])
        guard case .unlink(let plan)? = f.act(.ghosts(.readForUnlink(nil, connected: true))).last else {
            Issue.record("no unlink")
            return
        }
        #expect(plan.puppets.isEmpty && plan.botNick == nil)
    }

    @Test func aDelayedSubjectSentOnJoinNamesNobody() {
        var f = active()
        var joinSubject = subject("romeo", "Set long ago")
        joinSubject.delay = Date(timeIntervalSince1970: 1_700_000_000)
        let change = TopicChange(text: "Set long ago", actor: f.ghost(of: "romeo"), setter: nil)
        #expect(f.act(.xmppMessage(joinSubject)) == [.roomState(.setMatrixTopic(change))])
        var refusedForGhost = change
        refusedForGhost.actor = f.bot
        #expect(f.act(.roomState(.topicSet(change, .refused("M_FORBIDDEN")))) == [.roomState(.setMatrixTopic(refusedForGhost))])
        #expect(f.act(.roomState(.topicSet(refusedForGhost, nil))) == [.roomState(.recordSubject("Set long ago"))])
    }

    @Test func aDestructionWithoutReasonOrVenueSaysSo() {
        var f = active()
        var gone = f.presence("Matrix", available: false, codes: [.selfPresence])
        gone.destroyed = RoomDestruction()
        #expect(f.act(.xmppPresence(gone)) == [
            .roomState(.recordDestruction(detail: "the XMPP room was destroyed")),
            .roomState(.postNotice("⚠️ The XMPP room was destroyed. This room is no longer bridged.", subject: "destroyed:lounge@conference.localhost"))])
    }

    // MARK: Upgrades

    func tombstone(_ seq: Int64, to replacement: RoomID, from sender: UserID? = nil) -> QueuedMatrixEvent {
        let f = MachineFixture()
        return QueuedMatrixEvent(seq: seq, event: MatrixRoomEvent(eventID: EventID("$tomb\(seq)")!, room: f.room, sender: sender ?? f.alice,
                                                                  stateKey: "", content: .tombstone(replacement: replacement, body: "upgraded")))
    }

    @Test func aTombstoneIsFollowedWhenTheNewRoomNamesThisOneThenTheLinkMovesAndThePortalCloses() {
        var f = active()
        let new = RoomID("!new:localhost")!
        let upgrade = RoomStateMachine.RoomUpgrade(replacement: new, via: ["localhost"], seq: 1, eventID: EventID("$tomb1")!)
        #expect(f.act(.matrixEvents([tombstone(1, to: new), f.text(2, "after the tombstone")])) == [.roomState(.joinReplacementRoom(upgrade))])
        #expect(f.act(.roomState(.replacementJoined(upgrade, predecessor: f.room, nil))) == [.roomState(.moveLink(upgrade))])
        #expect(f.act(.roomState(.linkMoved(upgrade, moved: true))) == [.roomState(.finishUpgrade(upgrade, ghosts: [f.ghost(of: "romeo")]))])
        #expect(f.machine.closed)
        // Nothing more is handled here: the new room's portal takes over.
        #expect(f.act(.xmppMessage(f.groupchat("romeo", "late"))) == [])
    }

    @Test func aTombstoneToARoomThatDoesNotReplaceThisOneIsNotFollowed() {
        var f = active()
        let new = RoomID("!elsewhere:localhost")!
        let upgrade = RoomStateMachine.RoomUpgrade(replacement: new, via: ["localhost"], seq: 1, eventID: EventID("$tomb1")!)
        _ = f.act(.matrixEvents([tombstone(1, to: new)]))
        #expect(f.act(.roomState(.replacementJoined(upgrade, predecessor: RoomID("!other:localhost")!, nil))) == [.roomState(.dequeue(seq: 1))])
        #expect(!f.machine.closed)
    }

    @Test func aReplacementTheBotCannotJoinYetIsExplainedAndTriedAgainAsAnUnavailableHomeserverIs() {
        var f = active()
        let new = RoomID("!new:localhost")!
        let upgrade = RoomStateMachine.RoomUpgrade(replacement: new, via: ["localhost"], seq: 1, eventID: EventID("$tomb1")!)
        _ = f.act(.matrixEvents([tombstone(1, to: new), f.text(2, "after the tombstone")]))
        // Invite-only: the users are told to invite the bridge; the tombstone stays queued and is tried again.
        #expect(f.act(.roomState(.replacementJoined(upgrade, predecessor: nil, .refused("M_FORBIDDEN")))) == [
            .roomState(.postNotice("⚠️ This room was upgraded. Invite the bridge to the new room to keep it linked with the XMPP room (joining it was refused: M_FORBIDDEN).",
                        subject: "upgrade-refused:$tomb1")),
            .schedule(.inboxRetry, at: f.t0 + .seconds(5))])
        #expect(f.machine.inboxBlocked && f.machine.agenda.isEmpty)
        #expect(f.act(.retryInbox) == [.loadUndelivered])
        var g = active()
        _ = g.act(.matrixEvents([tombstone(1, to: new)]))
        #expect(g.act(.roomState(.replacementJoined(upgrade, predecessor: nil, .unavailable("down")))) == [.schedule(.inboxRetry, at: g.t0 + .seconds(5))])
        // The store failing to move the link: the row stays, tried again later.
        var h = active()
        _ = h.act(.matrixEvents([tombstone(1, to: new)]))
        _ = h.act(.roomState(.replacementJoined(upgrade, predecessor: h.room, nil)))
        #expect(h.act(.roomState(.linkMoved(upgrade, moved: false))) == [.schedule(.inboxRetry, at: h.t0 + .seconds(5))])
        #expect(!h.machine.closed)
    }

    @Test func waitingForAnInvitationIsAWarningOnceThenQuiet() {
        var f = active()
        let new = RoomID("!new:localhost")!
        let upgrade = RoomStateMachine.RoomUpgrade(replacement: new, via: ["localhost"], seq: 1, eventID: EventID("$tomb1")!)
        _ = f.act(.matrixEvents([tombstone(1, to: new)]))
        func levels(_ actions: [PortalStateMachine.Action]) -> [Logger.Level] {
            actions.compactMap { if case .roomState(.log(let entry)) = $0 { entry.level } else { nil } }
        }
        #expect(levels(f.machine.receive(.roomState(.replacementJoined(upgrade, predecessor: nil, .refused("M_FORBIDDEN"))), now: f.t0)) == [.warning])
        #expect(levels(f.machine.receive(.roomState(.replacementJoined(upgrade, predecessor: nil, .refused("M_FORBIDDEN"))), now: f.t0)) == [.debug])
    }

    @Test func tombstonesFromTheBridgeOrToThisSameRoomAreIgnored() {
        var f = active()
        #expect(f.act(.matrixEvents([tombstone(1, to: f.room)])) == [.roomState(.dequeue(seq: 1))])
        #expect(f.act(.matrixEvents([tombstone(2, to: RoomID("!new:localhost")!, from: f.bot)])) == [.roomState(.dequeue(seq: 2))])
    }
}
