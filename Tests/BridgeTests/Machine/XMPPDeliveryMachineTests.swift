import Foundation
import IsthmusCommon
import IsthmusStore
import Testing
import XMPP
@testable import Bridge

/// The Matrix → XMPP delivery sub-machine on its own, over a hand-made view of the room (Alice's puppet is joined).
@Suite struct XMPPDeliveryMachineTests {
    typealias Output = XMPPDeliveryMachine.Output

    let f = MachineFixture()
    var alicesOccupant: JID { f.puppetJID(f.alice) }

    func room(puppetJoined: Bool = true) -> XMPPDeliveryMachine.Room {
        XMPPDeliveryMachine.Room(ghosts: [:], puppets: [f.alice: f.puppet(f.alice, "Alice", joined: puppetJoined)],
                                 displaynames: [f.alice: "Alice"], moderation: nil)
    }

    func receive(_ m: inout XMPPDeliveryMachine, _ input: XMPPDeliveryMachine.Input, puppetJoined: Bool = true,
                 at now: ContinuousClock.Instant? = nil) -> [Output] {
        m.receive(input, in: room(puppetJoined: puppetJoined), now: now ?? f.t0).filter { if case .perform(.log) = $0 { false } else { true } }
    }

    @Test func aPlainMessageIsMappedThenSentFromThePuppetAndACommandNever() {
        var m = f.machine.xmppDelivery
        let one = f.text(1, from: f.alice)
        let delivery = f.outgoing(one)
        let inserted = receive(&m, .event(one))
        guard case .perform(.insertMapping(let mapping, consumingInbox: 1, delivery: delivery, reaction: nil))? = inserted.first, inserted.count == 1 else {
            Issue.record("expected one insertMapping, got \(inserted)")
            return
        }
        #expect(mapping.nick == "Alice" && mapping.state == .sending && mapping.originID == delivery.originID)
        #expect(receive(&m, .mappingInserted(delivery, inserted: true)) == [.portal(.viaPuppet(delivery))])
        #expect(receive(&m, .mappingInserted(delivery, inserted: false)) == [], "mapped already: nothing goes out twice")
        #expect(receive(&m, .mappingInserted(delivery, inserted: nil)) == [.portal(.drainBlocked)])
        #expect(receive(&m, .puppetReady(delivery, occupant: alicesOccupant)) == [.perform(.sendGroupchat(delivery, from: alicesOccupant))])
        #expect(receive(&m, .groupchatSent(delivery, nil)) == [.portal(.puppetSent(f.alice, withBody: true))])
        #expect(receive(&m, .event(f.text(2, from: f.alice, "!isthmus status"))) == [.perform(.dequeue(seq: 2))])
    }

    @Test func aReplyIsResolvedFirstAndAStoreThatCannotBeReadBlocksTheDrain() {
        var m = f.machine.xmppDelivery
        let reply = QueuedMatrixEvent(seq: 3, event: MatrixRoomEvent(eventID: EventID("$r3")!, room: f.room, sender: f.alice,
                                                                    content: .message(msgtype: .text, body: "yes", details: MessageDetails(replyTo: EventID("$a1")))))
        #expect(receive(&m, .event(reply)) == [.perform(.resolveMatrixTargets(reply))])
        #expect(receive(&m, .targetsResolved(reply, nil)) == [.portal(.drainBlocked)])
    }

    @Test func failuresStopTheDrainOrTheResendsOrAreToldInTheRoom() {
        var m = f.machine.xmppDelivery
        let one = f.text(1, from: f.alice)
        let delivery = f.outgoing(one), resend = f.outgoing(one, purpose: .resend)
        #expect(receive(&m, .groupchatSent(delivery, .timeout)) == [.portal(.xmppUnavailable(.timeout))])
        #expect(receive(&m, .puppetFailed(delivery, .notConnected)) == [.portal(.xmppUnavailable(.notConnected))])
        #expect(receive(&m, .groupchatSent(resend, .timeout)) == [.portal(.resendsStopped)])
        #expect(receive(&m, .groupchatSent(resend, .refused(StanzaErrorInfo(condition: .forbidden, text: nil)))) == [],
                "a refused resend waits for the next round")
        #expect(receive(&m, .groupchatSent(delivery, .refused(StanzaErrorInfo(condition: .forbidden, text: nil)))) == [
            .perform(.markFailed(delivery.originID)),
            .perform(.postNotice("⚠️ Alice's message could not be delivered to the XMPP room (forbidden).",
                                 subject: "failed:\(delivery.originID.rawValue)")),
        ])
    }

    @Test func aBounceSayingThePuppetIsGoneRejoinsItAndResendsOnce() {
        var m = f.machine.xmppDelivery
        let one = f.text(1, from: f.alice)
        let originID = f.outgoing(one).originID
        let gone = StanzaErrorInfo(condition: .notAcceptable, text: nil)
        #expect(receive(&m, .bounced(originID, gone)) == [.perform(.lookUpOwnMessage(originID, error: gone))])
        let again = XMPPDeliveryMachine.XMPPDelivery(user: f.alice, originID: originID, stanza: f.outgoing(one).stanza, purpose: .afterRefusal(gone))
        #expect(receive(&m, .ownMessageFound(originID, mapping: f.mapping(one), error: gone)) == [.portal(.puppetOut(f.alice)), .portal(.viaPuppet(again))])
        // Without a joined puppet there is nothing to rejoin: the sender is told.
        #expect(receive(&m, .ownMessageFound(originID, mapping: f.mapping(one), error: gone), puppetJoined: false).first
                == .perform(.markFailed(originID)))
    }

    @Test func aReactionToAnUnreflectedMessagePausesTheDrainUntilItsDeadlineThenIsSkipped() {
        var m = f.machine.xmppDelivery
        let originID = f.naming.originID(for: EventID("$a1")!)
        let pending = MessageMapping(room: f.room, eventID: EventID("$a1"), stanzaID: nil, originID: originID, direction: .matrixToXMPP,
                                     sender: .matrix(f.alice), state: .sending, xmppID: StanzaAttributeID(originID.rawValue), nick: "Alice")
        let react = QueuedMatrixEvent(seq: 3, event: MatrixRoomEvent(eventID: EventID("$x3")!, room: f.room, sender: f.alice,
                                                                    content: .reaction(target: EventID("$a1")!, key: "👍")))
        #expect(receive(&m, .targetsResolved(react, .init(reacted: pending))) == [.portal(.pauseDrain(until: f.t0 + .seconds(10)))])
        #expect(m.receiptWait == PortalStateMachine.ReceiptWait(originID: originID, eventID: react.event.eventID, until: f.t0 + .seconds(10)))
        #expect(receive(&m, .targetsResolved(react, .init(reacted: pending)), at: f.t0 + .seconds(10)) == [.perform(.dequeue(seq: 3))])
        #expect(m.receiptWait == nil)
    }
}
