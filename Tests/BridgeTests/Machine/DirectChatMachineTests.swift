@testable import Bridge
import IsthmusCommon
import IsthmusStore
import Testing
import XMPP

/// Matrix → XMPP in DMs, event by event: snapshot in, actions out, outcomes fed back.
@Suite struct DirectChatMachineTests {
    typealias Machine = DirectChatMachine
    let t0 = ContinuousClock.now
    let linked = RoomID("!linked:localhost")!
    let dm = RoomID("!dm:localhost")!
    let alice = UserID("@alice:localhost")!
    let ghost = UserID("@_xmpp_romeo:localhost")!
    let muc = JID("lounge@conference.localhost")!
    let naming = BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!

    var chat: DirectChat {
        DirectChat(linkedRoom: linked, identity: "romeo@localhost", matrixUser: alice, muc: muc, ghost: ghost, matrixRoom: dm)
    }

    var romeo: RoomGhost {
        RoomGhost(room: linked, user: ghost, nick: "Romeo", occupantID: nil, realJID: JID("romeo@localhost"), joined: true)
    }

    func machine(active: Bool = true, ghostDevices: Bool = false) -> Machine {
        var machine = Machine(configuration: .init(naming: naming, mediaLinks: nil, ghostDevices: ghostDevices))
        if active { machine.linkStatus(linked, active: true) }
        return machine
    }

    func queued(_ seq: Int64, _ content: MatrixRoomEvent.Content, id: String = "$e1", sender: UserID? = nil) -> QueuedMatrixEvent {
        QueuedMatrixEvent(seq: seq, event: MatrixRoomEvent(eventID: EventID(id)!, room: dm, sender: sender ?? alice, content: content))
    }

    func text(_ seq: Int64, _ body: String, id: String = "$e1") -> QueuedMatrixEvent {
        queued(seq, .message(msgtype: .text, body: body, details: nil), id: id)
    }

    func snapshot(linked isLinked: Bool = true) -> DirectEventSnapshot {
        DirectEventSnapshot(chat: chat, occupant: romeo, linkedRoomIsLinked: isLinked)
    }

    func delivery(of item: QueuedMatrixEvent, body: String) -> Machine.PrivateDelivery {
        let originID = naming.privateOriginID(for: item.event.eventID)
        return .init(item: item, from: naming.puppetJID(for: alice)!, to: muc.with(resource: "Romeo")!, body: body,
                     references: MessageReferences(), originID: originID,
                     mapping: MessageMapping(room: dm, eventID: item.event.eventID, stanzaID: nil, originID: originID, direction: .matrixToXMPP,
                                             sender: .matrix(alice), state: .delivered, kind: .message,
                                             xmppID: StanzaAttributeID(originID.rawValue), excerpt: body))
    }

    func notice(_ text: String, subject: String, answering item: QueuedMatrixEvent, encrypted: Bool = false) -> Machine.DirectNotice {
        .init(text: text, room: dm, ghost: ghost, subject: subject, item: item, encrypted: encrypted)
    }

    func bounce(_ originID: OriginID) -> Machine.Bounce {
        .init(originID: originID, nick: "Romeo", error: StanzaErrorInfo(condition: .notAcceptable))
    }

    /// Without the log lines.
    func act(_ machine: inout Machine, _ input: Machine.Input, at now: ContinuousClock.Instant? = nil) -> [Machine.Action] {
        machine.receive(input, now: now ?? t0).filter { if case .log = $0 { false } else { true } }
    }

    @Test func aMessageIsSentThenConsumedWithItsMappingAndPlacesABounce() {
        var m = machine()
        let item = text(1, "hi")
        let sent = delivery(of: item, body: "hi")
        #expect(act(&m, .event(item, snapshot())) == [.sendPrivate(sent)])
        #expect(act(&m, .bounced(bounce(sent.originID))) == [], "not placed before it went out")
        #expect(act(&m, .privateSent(sent, connected: true)) == [.consume(item, mapping: sent.mapping)])
        #expect(act(&m, .bounced(bounce(sent.originID))) == [.readBouncedChat(bounce(sent.originID), in: dm)])
    }

    @Test func aBounceIsToldInTheDMAsTheGhostAndAnswersNoQueuedEvent() {
        var m = machine()
        let told = Machine.DirectNotice(text: "⚠️ Your message could not be delivered to Romeo (not-acceptable).", room: dm, ghost: ghost,
                                        subject: "bounce:isthmus-pm-1", item: nil)
        let id = OriginID("isthmus-pm-1")!
        #expect(act(&m, .bouncedChatRead(bounce(id), chat)) == [.postNotice(told)])
        #expect(act(&m, .bouncedChatRead(bounce(id), nil)) == [], "the DM is gone")
        var again = told
        again.rejoined = true
        #expect(act(&m, .noticeNotInRoom(told)) == [.joinRoom(dm, ghost: ghost), .postNotice(again)])
        #expect(act(&m, .noticeNotInRoom(again)) == [], "logged; no event to hold")
        #expect(act(&m, .noticePosted(again)) == [], "nothing to consume")
    }

    @Test func xmppNotConnectedHoldsTheEvent() {
        var m = machine()
        let item = text(1, "hi")
        let sent = delivery(of: item, body: "hi")
        #expect(act(&m, .event(item, snapshot())) == [.sendPrivate(sent)])
        #expect(act(&m, .privateSent(sent, connected: false)) == [.hold(dm)])
        #expect(act(&m, .bounced(bounce(sent.originID))) == [])
    }

    @Test func anEventNoLongerPendingDoesNothingAndOneWithoutADMIsConsumed() {
        var m = machine()
        let item = text(1, "hi")
        #expect(act(&m, .event(item, nil)) == [])
        #expect(act(&m, .event(item, DirectEventSnapshot())) == [.consume(item)])
    }

    @Test func theEventWaitsWhileItsLinkedRoomIsLinkedButNotActive() {
        var m = machine(active: false)
        let item = text(1, "hi")
        #expect(act(&m, .event(item, snapshot())) == [.hold(dm)])
        m.linkStatus(linked, active: true)
        #expect(act(&m, .event(item, snapshot())) == [.sendPrivate(delivery(of: item, body: "hi"))])
        m.linkStatus(linked, active: false)
        #expect(act(&m, .event(item, snapshot())) == [.hold(dm)])
    }

    @Test func eventsHandedOverLiveGoAtOnceUnlessOlderOnesWaitThenTheRoomIsDrainedOrLeftForItsLinkedRoom() {
        var m = machine(active: false)
        let items = [text(2, "hi", id: "$e2"), text(3, "again", id: "$e3")]
        let olderWait = DirectArrivalSnapshot(olderQueued: true, linkedRoom: linked, linkedRoomIsLinked: true)
        #expect(m.arrived(items, in: dm, DirectArrivalSnapshot()) == [.handle(items)], "nothing older: each event holds itself")
        #expect(m.arrived(items, in: dm, olderWait) == [], "left to the drain when the linked room is active")
        m.linkStatus(linked, active: true)
        #expect(m.arrived(items, in: dm, olderWait) == [.drain(dm)])
        #expect(m.arrived(items, in: dm, DirectArrivalSnapshot()) == [.handle(items)])
        m.linkStatus(linked, active: false)
        #expect(m.arrived(items, in: dm, olderWait) == [])
        #expect(m.arrived(items, in: dm, DirectArrivalSnapshot(olderQueued: true, linkedRoom: linked)) == [.drain(dm)],
                "unlinked: drained, each event then told it was not delivered")
        #expect(m.arrived(items, in: dm, DirectArrivalSnapshot(olderQueued: true)) == [.drain(dm)], "no DM: drained, each consumed")
    }

    @Test func anUnlinkedRoomsDMSaysTheMessageWasNotDeliveredThenConsumesIt() {
        var m = machine(active: false)
        let item = text(1, "hi")
        let told = notice(Machine.unbridgedNotice, subject: "dm:$e1", answering: item)
        #expect(act(&m, .event(item, snapshot(linked: false))) == [.postNotice(told)])
        #expect(act(&m, .noticePosted(told)) == [.consume(item)])
    }

    @Test func aNoticeTheGhostMayNotPostJoinsItOnceThenTheEventWaits() {
        var m = machine(active: false)
        let item = text(1, "hi")
        let told = notice(Machine.unbridgedNotice, subject: "dm:$e1", answering: item)
        #expect(act(&m, .event(item, snapshot(linked: false))) == [.postNotice(told)])
        var again = told
        again.rejoined = true
        #expect(act(&m, .noticeNotInRoom(told)) == [.joinRoom(dm, ghost: ghost), .postNotice(again)])
        #expect(act(&m, .noticeNotInRoom(again)) == [.hold(dm)])
        #expect(act(&m, .noticePosted(again)) == [.consume(item)])
    }

    @Test func aMessageToAnOccupantThatLeftIsANotice() {
        var m = machine()
        let item = text(1, "hi")
        var left = snapshot()
        left.occupant?.joined = false
        let told = notice("⚠️ Romeo is not in the XMPP room any more; the message was not delivered.", subject: "dm:$e1", answering: item)
        #expect(act(&m, .event(item, left)) == [.postNotice(told)])
        #expect(act(&m, .noticePosted(told)) == [.consume(item)])
    }

    @Test func encryptedEventsAreToldOnceAnHourRecordedOnlyOncePostedWhateverTheXMPPSide() {
        var m = machine(active: false)
        let first = queued(1, .encrypted, id: "$x1")
        let second = queued(2, .encrypted, id: "$x2")
        let told = notice(EncryptedEventNotices.encryptedText(.directChat, heldBack: 0), subject: "encrypted:$x1", answering: first, encrypted: true)
        #expect(act(&m, .event(first, snapshot())) == [.postNotice(told)])
        // Not posted (the homeserver failed, the event stays queued): the next one is answered instead.
        let toldSecond = notice(EncryptedEventNotices.encryptedText(.directChat, heldBack: 0), subject: "encrypted:$x2", answering: second,
                                encrypted: true)
        #expect(act(&m, .event(second, snapshot())) == [.postNotice(toldSecond)])
        #expect(act(&m, .noticePosted(toldSecond)) == [.consume(second)])
        // Within the hour: consumed without a notice.
        #expect(act(&m, .event(first, snapshot()), at: t0 + .seconds(60)) == [.consume(first)])
    }

    @Test func theInvitationIsAcceptedAndALeaveForgetsTheRoom() {
        var m = machine(active: false)
        let invite = QueuedMatrixEvent(seq: 1, event: MatrixRoomEvent(eventID: EventID("$i")!, room: dm, sender: alice, stateKey: ghost.rawValue,
                                                                        content: .member(membership: .invite, displayname: nil, reason: nil)))
        #expect(act(&m, .event(invite, snapshot())) == [.acceptInvite(chat, room: dm), .consume(invite)])
        let leave = QueuedMatrixEvent(seq: 2, event: MatrixRoomEvent(eventID: EventID("$l")!, room: dm, sender: alice, stateKey: alice.rawValue,
                                                                       content: .member(membership: .leave, displayname: nil, reason: nil)))
        var forgotten = chat
        forgotten.matrixRoom = nil
        #expect(act(&m, .event(leave, snapshot())) == [.forgetRoom(forgotten, leaving: dm), .consume(leave)])
    }

    @Test func withEncryptionAllowedTheGhostGetsItsDeviceBeforeJoiningAnEncryptedDMAndOnEachEncryptedEvent() {
        var invite = MatrixRoomEvent(eventID: EventID("$i")!, room: dm, sender: alice, stateKey: ghost.rawValue,
                                     content: .member(membership: .invite, displayname: nil, reason: nil))
        invite.invitedToEncryptedRoom = true
        let encryptedInvite = QueuedMatrixEvent(seq: 1, event: invite)
        var m = machine(active: false, ghostDevices: true)
        #expect(act(&m, .event(encryptedInvite, snapshot())) == [.prepareDevice(ghost: ghost), .acceptInvite(chat, room: dm), .consume(encryptedInvite)])
        // An unencrypted DM: no device yet.
        invite.invitedToEncryptedRoom = false
        let plainInvite = QueuedMatrixEvent(seq: 2, event: invite)
        #expect(act(&m, .event(plainInvite, snapshot())) == [.acceptInvite(chat, room: dm), .consume(plainInvite)])
        // Encryption turned on later: the device, and nothing to tell (the ghost decrypts). A message that could not be
        // decrypted: the device (in case it was missing), then the notice.
        let turnedOn = queued(3, .encryptionEnabled, id: "$on")
        #expect(act(&m, .event(turnedOn, snapshot())) == [.prepareDevice(ghost: ghost), .consume(turnedOn)])
        let lost = queued(5, .encrypted, id: "$lost")
        let told = notice(EncryptedEventNotices.encryptedText(.decryptingDirectChat, heldBack: 0), subject: "encrypted:$lost",
                          answering: lost, encrypted: true)
        #expect(act(&m, .event(lost, snapshot())) == [.prepareDevice(ghost: ghost), .postNotice(told)])

        // Encryption not allowed: never a device.
        var off = machine(active: false)
        #expect(act(&off, .event(encryptedInvite, snapshot())) == [.acceptInvite(chat, room: dm), .consume(encryptedInvite)])
        #expect(!act(&off, .event(queued(4, .encrypted, id: "$x"), snapshot())).contains(.prepareDevice(ghost: ghost)))
    }

    @Test func aFilesCaptionFollowsItAndPlacesABounceToo() {
        var m = machine()
        let item = text(1, "x")
        var sent = delivery(of: item, body: "https://bridge/file")
        sent.caption = "look"
        let captionID = sent.originID.caption!
        #expect(act(&m, .privateSent(sent, connected: true)) == [
            .sendCaption("look", of: sent.originID, route: .chat(from: sent.from, to: sent.to), room: dm),
            .consume(item, mapping: sent.mapping)])
        #expect(act(&m, .captionSent(captionID, room: dm)) == [])
        #expect(act(&m, .bounced(bounce(captionID))) == [.readBouncedChat(bounce(captionID), in: dm)])
    }

    @Test func theGhostsOwnEventsAreConsumedUnsent() {
        var m = machine()
        let item = queued(1, .message(msgtype: .text, body: "echo", details: nil), sender: ghost)
        #expect(act(&m, .event(item, snapshot())) == [.consume(item)])
    }
}
