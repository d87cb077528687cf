@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing
import XMPP

/// The room-state sub-machine on its own: its inputs and a hand-made view of the room in, its actions out.
@Suite struct RoomStateMachineTests {
    typealias Machine = RoomStateMachine
    typealias TopicChange = RoomStateMachine.TopicChange
    typealias SubjectChange = RoomStateMachine.SubjectChange
    typealias Upgrade = RoomStateMachine.RoomUpgrade
    let f = MachineFixture()

    /// A machine whose room state is loaded: the subject "Old" and the name "Old name" were bridged last.
    func loaded(syncName: Bool = false, avatars: Bool = false, announcedName: String? = nil) -> Machine {
        var m = Machine(configuration: .init(room: f.room, muc: f.muc, naming: f.naming, botUserID: f.bot,
                                             syncName: syncName, avatars: avatars))
        _ = m.receive(.loaded(RoomTexts(subject: "Old", name: "Old name"), avatar: nil), in: room(announcedName: announcedName))
        return m
    }

    /// The room as the portal machine shows it: "romeo" has a joined ghost, Alice a puppet under her name.
    func room(botJoined: Bool = true, announcedName: String? = nil, destroyed: Bool = false) -> Machine.Room {
        let (f, alice) = (f, f.alice)
        return Machine.Room(
            isOurOccupant: { $0 == "Matrix" || $0 == "Alice" },
            botNick: "Matrix",
            joinedGhost: { $0 == "romeo" ? f.ghost(of: "romeo") : nil },
            joinedGhosts: { [f.ghost(of: "romeo")] },
            puppetOccupant: { $0 == alice ? f.puppetJID(alice) : nil },
            nameInMUC: { $0 == alice ? "Alice" : $0.localpart },
            nameInMatrix: { $0 == alice ? "Alice" : $0.localpart },
            isBridged: { $0 != f.bot && !$0.localpart.hasPrefix("_xmpp_") },
            botJoined: botJoined, announcedName: announcedName, destroyed: destroyed)
    }

    func subject(_ nick: String, _ text: String) -> Machine.Input {
        var message = f.groupchat(nick, "", stanzaID: nil)
        message.body = nil
        message.subject = text
        return .subject(message, text: text)
    }

    func topic(_ seq: Int64, _ text: String, from sender: UserID? = nil) -> QueuedMatrixEvent {
        QueuedMatrixEvent(seq: seq, event: MatrixRoomEvent(eventID: EventID("$t\(seq)")!, room: f.room, sender: sender ?? f.alice,
                                                           stateKey: "", content: .topic(text)))
    }

    func change(_ seq: Int64, _ text: String) -> SubjectChange {
        let event = EventID("$t\(seq)")!
        return SubjectChange(text: text, user: f.alice, eventID: event, id: f.naming.originID(for: event), seq: seq)
    }

    /// The actions without log lines.
    func quiet(_ outputs: [Machine.Output]) -> [Machine.Output] {
        outputs.filter { if case .perform(.log) = $0 { false } else { true } }
    }

    // MARK: Subject ↔ topic

    @Test func anOccupantsSubjectIsSetByItsGhostAndRecordedOnceSet() {
        var m = loaded()
        let byGhost = TopicChange(text: "New", actor: f.ghost(of: "romeo"), setter: "romeo")
        let byBot = TopicChange(text: "New", actor: f.bot, setter: "romeo")
        #expect(m.receive(subject("romeo", "New"), in: room()) == [.perform(.setMatrixTopic(byGhost))])
        #expect(m.receive(.topicSet(byGhost, .refused("M_FORBIDDEN")), in: room()) == [.perform(.setMatrixTopic(byBot))])
        #expect(m.receive(.topicSet(byBot, nil), in: room())
                == [.perform(.recordSubject("New")), .perform(.postNotice("romeo changed the XMPP room's subject.", subject: "subject:romeo:New"))])
        #expect(m.receive(subject("romeo", "New"), in: room()) == [])
        #expect(m.texts?.subject == "New")
    }

    @Test func aMatrixTopicWaitsForThePuppetThenGoesOutAndItsReflectionIsRecorded() {
        var m = loaded()
        let change = change(1, "From Matrix")
        #expect(m.receive(.matrixTopic(topic(1, "From Matrix"), text: "From Matrix"), in: room()) == [.portal(.ensurePuppet(change))])
        #expect(m.receive(.puppetReady(change), in: room()) == [.perform(.sendSubject(change, from: f.puppetJID(f.alice)))])
        #expect(m.awaitsAnswer(to: StanzaAttributeID(change.id.rawValue)))
        #expect(m.receive(.subjectSent(change, nil), in: room()) == [.perform(.dequeue(seq: 1))])
        #expect(m.receive(subject("Alice", "From Matrix"), in: room()) == [.perform(.recordSubject("From Matrix"))])
        #expect(m.pendingSubject == nil)
        // The known subject again, or a topic from the bridge: nothing to send.
        #expect(m.receive(.matrixTopic(topic(2, "From Matrix"), text: "From Matrix"), in: room()) == [.perform(.dequeue(seq: 2))])
        #expect(m.receive(.matrixTopic(topic(3, "Echo", from: f.bot), text: "Echo"), in: room()) == [.perform(.dequeue(seq: 3))])
    }

    @Test func aForbiddenSubjectIsRetriedByTheBridgesOccupantWhoSaysWhoChangedIt() {
        var m = loaded()
        let change = change(1, "From Matrix")
        _ = m.receive(.puppetReady(change), in: room())
        var retry = change
        retry.byBridge = true
        retry.seq = nil
        retry.id = OriginID(change.id.rawValue + "-bridge")!
        let forbidden = StanzaErrorInfo(condition: .forbidden, text: nil)
        #expect(quiet(m.receive(.subjectRefused(forbidden), in: room())) == [.perform(.sendSubject(retry, from: f.naming.botOccupant))])
        var accepted = m
        #expect(accepted.receive(subject("Matrix", "From Matrix"), in: room())
                == [.perform(.recordSubject("From Matrix")),
                    .perform(.announceInMUC("Alice changed the subject.", originID: OriginID(retry.id.rawValue + "-announce")!))])
        // Refused again: Alice is told why.
        #expect(quiet(m.receive(.subjectRefused(forbidden), in: room())) == [.perform(.postNotice(
            "⚠️ Alice's topic change was not applied to the XMPP room (only its moderators may change the subject there).",
            subject: "subject-refused:$t1"))])
        #expect(m.receive(.subjectRefused(forbidden), in: room()) == [], "nothing awaits an answer")
    }

    @Test func aSubjectThatCannotGoOutWaitsForTheXMPPSideOrIsExplained() {
        var m = loaded()
        let change = change(1, "From Matrix")
        #expect(m.receive(.puppetFailed(change, .notConnected), in: room()) == [.portal(.xmppUnavailable(.notConnected))])
        _ = m.receive(.puppetReady(change), in: room())
        #expect(m.receive(.subjectSent(change, .other("broken")), in: room()) == [
            .perform(.postNotice("⚠️ Alice's topic change was not applied to the XMPP room (broken).", subject: "subject-refused:$t1")),
            .perform(.dequeue(seq: 1))])
        #expect(m.pendingSubject == nil)
    }

    // MARK: Name and avatar

    @Test func withSyncNameTheAnnouncedNameIsCopiedWhenItDiffers() {
        var m = loaded(syncName: true, announcedName: "Lounge")
        #expect(m.texts?.name == "Lounge")
        let features = RoomFeatures(stanzaIDs: true, archive: true)
        #expect(m.receive(.featuresRead(features), in: room(announcedName: "Lounge")) == [])
        #expect(m.receive(.featuresRead(features), in: room(announcedName: "Salon")) == [.perform(.setMatrixRoomName("Salon"))])
        var without = loaded(announcedName: "Lounge")
        #expect(without.receive(.featuresRead(features), in: room(announcedName: "Salon")) == [])
    }

    @Test func theRoomsAvatarIsSetOnceAndANewerOneFollows() {
        let a = String(repeating: "a1", count: 20), b = String(repeating: "b2", count: 20)
        var m = loaded(avatars: true)
        #expect(m.receive(.roomPresence(.photo(a)), in: room()) == [.perform(.setMatrixRoomAvatar(.init(sha1: a, ours: nil)))])
        #expect(m.receive(.roomPresence(.photo(b)), in: room()) == [], "one change at a time")
        #expect(m.receive(.avatarSet(.init(sha1: a, ours: nil), .applied(RoomAvatarRecord(sha1: a, mxc: "mxc://hs/a"))), in: room())
                == [.perform(.setMatrixRoomAvatar(.init(sha1: b, ours: "mxc://hs/a")))])
        var off = loaded(avatars: false)
        #expect(off.receive(.roomPresence(.photo(a)), in: room()) == [])
    }

    // MARK: Upgrades

    @Test func aTombstoneIsFollowedThenTheLinkMovesAndThePortalCloses() {
        var m = loaded()
        let new = RoomID("!new:localhost")!
        let upgrade = Upgrade(replacement: new, via: ["localhost"], seq: 1, eventID: EventID("$t1")!)
        let tombstone = QueuedMatrixEvent(seq: 1, event: MatrixRoomEvent(eventID: EventID("$t1")!, room: f.room, sender: f.alice,
                                                                         stateKey: "", content: .tombstone(replacement: new, body: "")))
        #expect(quiet(m.receive(.tombstone(tombstone, replacement: new), in: room())) == [.perform(.joinReplacementRoom(upgrade))])
        #expect(quiet(m.receive(.replacementJoined(upgrade, predecessor: nil, .unavailable("down")), in: room())) == [.portal(.retryInbox)])
        #expect(m.receive(.replacementJoined(upgrade, predecessor: f.room, nil), in: room()) == [.perform(.moveLink(upgrade))])
        #expect(m.receive(.linkMoved(upgrade, moved: false), in: room()) == [.portal(.retryInbox)])
        #expect(quiet(m.receive(.linkMoved(upgrade, moved: true), in: room()))
                == [.portal(.close), .perform(.finishUpgrade(upgrade, ghosts: [f.ghost(of: "romeo")]))])
        #expect(quiet(m.receive(.replacementJoined(upgrade, predecessor: RoomID("!other:localhost")!, nil), in: room())) == [.perform(.dequeue(seq: 1))])
        #expect(m.receive(.tombstone(tombstone, replacement: f.room), in: room()) == [.perform(.dequeue(seq: 1))])
    }

    // MARK: Destruction and bridge info

    @Test func aDestructionIsRecordedAndToldOnceAndThePortalStopsUsingTheRoom() {
        var m = loaded()
        let gone = RoomDestruction(reason: "Moved", alternateVenue: JID("salon@conference.localhost")!)
        #expect(quiet(m.receive(.destroyed(gone), in: room())) == [
            .portal(.destroyed),
            .perform(.recordDestruction(detail: "the XMPP room was destroyed: Moved; alternate venue xmpp:salon@conference.localhost?join")),
            .perform(.postNotice("⚠️ The XMPP room was destroyed (reason: Moved). This room is no longer bridged. The conversation continues at xmpp:salon@conference.localhost?join",
                        subject: "destroyed:lounge@conference.localhost"))])
        #expect(m.receive(.destroyed(gone), in: room(destroyed: true)) == [])
    }

    @Test func theBridgeInfoIsSetOnceAndWithdrawnOnUnlink() {
        var m = loaded()
        #expect(m.receive(.activated, in: room()) == [.perform(.setBridgeInfo(f.bridgeInfo))])
        #expect(m.receive(.activated, in: room()) == [])
        #expect(m.receive(.unlinked, in: room()) == [.perform(.setBridgeInfo(f.bridgeInfoWithdrawn))])
    }

    @Test func theOutcomesAwaitedAreTheTopicTheSubjectTheJoinAndTheMove() {
        let upgrade = Upgrade(replacement: f.room, via: [], seq: 1, eventID: EventID("$t1")!)
        let awaited: [Machine.Action] = [.setMatrixTopic(TopicChange(text: "", actor: f.bot, setter: nil)),
                                         .sendSubject(change(1, ""), from: f.naming.botOccupant), .joinReplacementRoom(upgrade), .moveLink(upgrade)]
        let notAwaited: [Machine.Action] = [.setMatrixRoomAvatar(.init(sha1: nil, ours: nil)), .finishUpgrade(upgrade, ghosts: []),
                                            .dequeue(seq: 1)]
        #expect(awaited.allSatisfy { $0.awaitsOutcome })
        #expect(!notAwaited.contains { $0.awaitsOutcome })
    }
}
