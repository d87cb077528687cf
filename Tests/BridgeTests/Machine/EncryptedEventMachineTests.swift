@testable import Bridge
import Foundation
import IsthmusCommon
import Testing

/// Encrypted Matrix events: never bridged, never dropped in silence (one notice per room per hour).
@Suite struct EncryptedEventMachineTests {
    let roomA = RoomID("!a:localhost")!
    let roomB = RoomID("!b:localhost")!
    let alice = UserID("@alice:localhost")!
    let t0 = ContinuousClock.now

    func encrypted(_ n: Int, in room: RoomID) -> MatrixRoomEvent {
        MatrixRoomEvent(eventID: EventID("$x\(n)")!, room: room, sender: alice, content: .encrypted)
    }

    @Test func theFirstEncryptedEventOfARoomIsAnsweredThenAtMostOnceAnHourWithTheCountHeldBack() {
        var notices = EncryptedEventNotices()
        #expect(notices.take(encrypted(1, in: roomA), in: .linkedRoom, now: t0)
                == .init(text: EncryptedEventNotices.encryptedText(.linkedRoom, heldBack: 0), subject: "encrypted:$x1", heldBack: 0))
        #expect(notices.take(encrypted(2, in: roomA), in: .linkedRoom, now: t0 + .seconds(10)) == nil)
        #expect(notices.take(encrypted(3, in: roomA), in: .linkedRoom, now: t0 + .seconds(3599)) == nil)
        // Another room has an hour of its own.
        #expect(notices.take(encrypted(4, in: roomB), in: .linkedRoom, now: t0 + .seconds(20))?.subject == "encrypted:$x4")
        let later = notices.take(encrypted(5, in: roomA), in: .linkedRoom, now: t0 + .seconds(3600))
        #expect(later?.heldBack == 2)
        #expect(later?.text == "🔒 This bridge cannot read encrypted messages: encrypted messages sent here do not reach the XMPP room."
                + " 3 encrypted messages were not delivered since the last notice. (This notice repeats at most once an hour.)")
        #expect(notices.take(encrypted(6, in: roomA), in: .linkedRoom, now: t0 + .seconds(3601)) == nil)
    }

    @Test func aNoticeThatCouldNotBePostedIsNotCountedAsSaid() {
        var notices = EncryptedEventNotices()
        let first = encrypted(1, in: roomA)
        #expect(notices.notice(for: first, in: .directChat, now: t0) != nil)
        // The homeserver refused it: the event stays queued and is answered when it is handled again.
        #expect(notices.notice(for: first, in: .directChat, now: t0 + .seconds(5))?.subject == "encrypted:$x1")
        notices.record(first, noticed: true, now: t0 + .seconds(5))
        #expect(notices.notice(for: encrypted(2, in: roomA), in: .directChat, now: t0 + .seconds(6)) == nil)
    }

    @Test func turningEncryptionOnIsAlwaysAnsweredAndOtherEventsNever() {
        var notices = EncryptedEventNotices()
        let enabled = MatrixRoomEvent(eventID: EventID("$on")!, room: roomA, sender: alice, stateKey: "", content: .encryptionEnabled)
        #expect(notices.take(enabled, in: .directChat, now: t0)
                == .init(text: "🔒 Encryption was turned on here. This bridge cannot read encrypted messages, so nothing sent in this"
                         + " conversation reaches the XMPP user any more.", subject: "encrypted:$on", heldBack: 0))
        // Kept out of the hourly count: the first encrypted message still gets its notice.
        #expect(notices.take(encrypted(1, in: roomA), in: .directChat, now: t0 + .seconds(1)) != nil)
        #expect(notices.take(enabled, in: .directChat, now: t0 + .seconds(2)) != nil)
        let text = MatrixRoomEvent(eventID: EventID("$t")!, room: roomA, sender: alice, content: .message(msgtype: .text, body: "hi"))
        #expect(notices.take(text, in: .linkedRoom, now: t0) == nil)
    }

    @Test func theTextsNameNoId() {
        for place in [EncryptedEventNotices.Place.linkedRoom, .directChat, .decryptingDirectChat] {
            for text in [EncryptedEventNotices.encryptedText(place, heldBack: 4), EncryptedEventNotices.enabledText(place)].compactMap({ $0 }) {
                #expect(!text.contains("@") && !text.contains("!") && !text.contains("$") && !text.contains(":localhost"))
            }
        }
    }

    @Test func aDMWhoseGhostDecryptsIsToldOnlyOfWhatItCouldNotDecrypt() {
        var notices = EncryptedEventNotices()
        let t0 = ContinuousClock.now
        let enabled = MatrixRoomEvent(eventID: EventID("$on")!, room: roomA, sender: alice, stateKey: "", content: .encryptionEnabled)
        #expect(notices.take(enabled, in: .decryptingDirectChat, now: t0) == nil, "turning encryption on changes nothing")
        let lost = MatrixRoomEvent(eventID: EventID("$x")!, room: roomA, sender: alice, content: .encrypted)
        let notice = notices.take(lost, in: .decryptingDirectChat, now: t0)
        #expect(notice?.text.hasPrefix("🔒 The bridge could not decrypt a message sent here") == true, "\(String(describing: notice))")
    }

    @Test func thePortalTellsTheRoomOnceAnHourAndNeverBridgesTheEvent() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let one = QueuedMatrixEvent(seq: 1, event: MatrixRoomEvent(eventID: EventID("$c1")!, room: f.room, sender: f.alice, content: .encrypted))
        let two = QueuedMatrixEvent(seq: 2, event: MatrixRoomEvent(eventID: EventID("$c2")!, room: f.room, sender: f.alice, content: .encrypted))
        let text = EncryptedEventNotices.encryptedText(.linkedRoom, heldBack: 0)
        #expect(f.act(.matrixEvents([one])) == [.postNotice(text, subject: "encrypted:$c1"), .dequeue(seq: 1)])
        #expect(f.act(.matrixEvents([two]), at: f.t0 + .seconds(60)) == [.dequeue(seq: 2)])
        // A plain message behind them is bridged as usual.
        let plain = f.text(3, "plain")
        #expect(f.act(.matrixEvents([plain])) == [.xmppDelivery(.insertMapping(f.mapping(plain), consumingInbox: 3, delivery: f.outgoing(plain)))])
    }

    @Test func thePortalAnnouncesEncryptionTurnedOnAndIgnoresOurOwnUsers() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let on = QueuedMatrixEvent(seq: 1, event: MatrixRoomEvent(eventID: EventID("$on")!, room: f.room, sender: f.alice, stateKey: "",
                                                                  content: .encryptionEnabled))
        #expect(f.act(.matrixEvents([on])) == [.postNotice(EncryptedEventNotices.enabledText(.linkedRoom)!, subject: "encrypted:$on"),
                                                .dequeue(seq: 1)])
        let fromGhost = QueuedMatrixEvent(seq: 2, event: MatrixRoomEvent(eventID: EventID("$g")!, room: f.room, sender: f.ghost(of: "romeo"),
                                                                         content: .encrypted))
        #expect(f.act(.matrixEvents([fromGhost])) == [.dequeue(seq: 2)])
    }
}
