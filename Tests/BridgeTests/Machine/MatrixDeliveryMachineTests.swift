import Foundation
import IsthmusCommon
import IsthmusStore
import Testing
import XMPP
@testable import Bridge

/// The XMPP → Matrix delivery sub-machine on its own, over a hand-made view of the room.
@Suite struct MatrixDeliveryMachineTests {
    typealias Output = MatrixDeliveryMachine.Output

    let f = MachineFixture()
    var machine: MatrixDeliveryMachine { f.machine.matrixDelivery }
    var romeo: UserID { f.ghost(of: "romeo") }

    /// Romeo's ghost joined under `romeo` (no setup) unless `joined` is false; the bridge's occupant is "Matrix".
    func room(joined: Bool = true, trusts: Bool = true, botJoined: Bool = true) -> MatrixDeliveryMachine.Room {
        let (ghost, roomID) = (romeo, f.room)
        return MatrixDeliveryMachine.Room(
            trustsStanzaIDs: trusts,
            botNick: "Matrix",
            puppets: [:],
            ghostPlan: { message, joinedNow, rejoining in
                let occupant = joinedNow ? PortalStateMachine.Occupant(nick: message.nick, occupantID: nil, realJID: nil, ghost: ghost) : nil
                let isJoined = joined && rejoining?.0 != ghost
                let saved = RoomGhost(room: roomID, user: ghost, nick: message.nick, occupantID: nil, realJID: nil, joined: true)
                return .init(ghost: ghost, setup: isJoined ? nil : .init(ghost: ghost, identity: "romeo", nick: message.nick, join: true, saved: saved),
                             occupant: occupant)
            },
            botJoined: botJoined)
    }

    func sent(_ outputs: [Output]) -> PortalStateMachine.MatrixDelivery? {
        outputs.lazy.compactMap { if case .perform(.send(let delivery)) = $0 { delivery } else { nil } }.first
    }

    func withoutLogs(_ outputs: [Output]) -> [Output] {
        outputs.filter { if case .perform(.log) = $0 { false } else { true } }
    }

    @Test func ourOwnReflectionIsAReceiptAndTellsTheRouter() {
        let reflection = f.groupchat("Matrix", "mine", stanzaID: "s4", originID: "o1")
        #expect(machine.receive(.message(reflection), in: room())
                == [.perform(.recordReflection(originID: OriginID("o1"), stanzaID: StanzaID("s4"))), .portal(.reflected(OriginID("o1")))])
    }

    @Test func aMessageWithAStanzaIDIsLookedUpFirstAndAMappedOneGoesNoFurther() {
        let message = f.groupchat("romeo", "hi", stanzaID: "s5")
        #expect(machine.receive(.message(message), in: room()) == [.perform(.lookUpBridged(message))])
        #expect(machine.receive(.lookedUp(message, bridged: true), in: room()) == [])
        #expect(machine.receive(.lookedUp(message, bridged: nil), in: room()) == [], "a failed lookup sends nothing")
        let outputs = machine.receive(.lookedUp(message, bridged: false), in: room())
        #expect(outputs.first == .portal(.occupantSeen(PortalStateMachine.Occupant(nick: "romeo", occupantID: nil, realJID: nil, ghost: romeo))))
        #expect(sent(outputs)?.key == StanzaID("s5"))
        #expect(sent(outputs)?.ghost == romeo)
    }

    /// Issue 26: what the portal reads for a whole burst — only the key of a message that would be looked up plainly:
    /// not our own reflection, not one that refers to another, not one in a room whose stanza-ids are untrusted, not
    /// one from the room itself or without a body.
    @Test func onlyAPlainMessageFromAnotherOccupantHasAPlainLookUpKey() {
        let plain = f.groupchat("romeo", "hi", stanzaID: "s1")
        #expect(machine.plainLookUpKey(plain, in: room()) == StanzaID("s1"))
        // The key is what the machine then looks the message up by, with nothing else to read.
        #expect(machine.receive(.message(plain), in: room()) == [.perform(.lookUpBridged(plain))])
        #expect(machine.plainLookUpKey(f.groupchat("Matrix", "mine", stanzaID: "s2", originID: "o1"), in: room()) == nil)
        var reply = f.groupchat("romeo", "re", stanzaID: "s3")
        reply.references.reply = MessageReferences.Reply(to: nil, id: "s1")
        #expect(machine.plainLookUpKey(reply, in: room()) == nil)
        #expect(machine.plainLookUpKey(f.groupchat("romeo", "hi", stanzaID: "s4"), in: room(trusts: false)) == nil)
        #expect(machine.plainLookUpKey(f.groupchat("", "subject", stanzaID: "s5"), in: room()) == nil)
        var empty = f.groupchat("romeo", "x", stanzaID: "s6")
        empty.body = nil
        #expect(machine.plainLookUpKey(empty, in: room()) == nil)
    }

    @Test func anUnannouncedStanzaIDIsDroppedAndTheMessageKeyedByItsDigest() {
        let message = f.groupchat("romeo", "hi", stanzaID: "forged")
        var unkeyed = message
        unkeyed.stanzaID = nil
        let outputs = machine.receive(.message(message), in: room(trusts: false))
        #expect(sent(outputs)?.key == PortalStateMachine.digestKey(unkeyed, body: "hi"))
    }

    @Test func aDeliveryIsRecordedWithItsEventIDAndTheGhostsSavedState() {
        let message = f.groupchat("romeo", "hi", stanzaID: "s6")
        let delivery = sent(machine.receive(.lookedUp(message, bridged: false), in: room(joined: false)))!
        let outputs = withoutLogs(machine.receive(.delivered(delivery, eventIDs: [EventID("$m6")!]), in: room()))
        var record = delivery.record
        record.eventID = EventID("$m6")
        #expect(outputs == [.portal(.ghostSaved(delivery.setup!.saved)), .perform(.recordBridged(record))])
    }

    @Test func anUnavailableHomeserverIsWaitedOutAndARefusalRecordedAndToldToTheSender() {
        let message = f.groupchat("romeo", "hi", stanzaID: "s7")
        let delivery = sent(machine.receive(.lookedUp(message, bridged: false), in: room()))!
        var next = delivery
        next.attempt = 1
        #expect(withoutLogs(machine.receive(.failed(delivery, .unavailable("503")), in: room()))
                == [.perform(.retry(next, after: f.machine.configuration.matrixBackoff.pause(after: 0)))])
        let refused = withoutLogs(machine.receive(.failed(delivery, .refused("M_FORBIDDEN")), in: room()))
        #expect(refused == [
            .perform(.recordRefused(MessageMapping(room: f.room, eventID: nil, stanzaID: StanzaID("s7"), originID: nil, direction: .xmppToMatrix,
                                                   sender: .occupant(.nick("romeo")), state: .failed))),
            .perform(.tellSender(to: f.muc.with(resource: "romeo")!, body: "Your message could not be delivered to Matrix: M_FORBIDDEN")),
        ])
        #expect(withoutLogs(machine.receive(.failed(delivery, .refused("M_FORBIDDEN")), in: room(botJoined: false))).count == 1,
                "no private message without the bridge's occupant in the room")
    }

    @Test func aGhostNotInTheRoomJoinsAndSendsOnceMoreThenARefusalIsFinal() {
        let message = f.groupchat("romeo", "hi", stanzaID: "s8")
        let delivery = sent(machine.receive(.lookedUp(message, bridged: false), in: room()))!
        #expect(!delivery.rejoinIsFinal)
        let outputs = withoutLogs(machine.receive(.ghostNotInRoom(delivery, reason: "M_FORBIDDEN"), in: room()))
        guard outputs.count == 2, outputs[0] == .portal(.ghostOut(romeo)), let again = sent(outputs) else {
            Issue.record("expected the ghost out and a second send: \(outputs)")
            return
        }
        #expect(again.rejoined && again.setup?.join == true)
        let final = withoutLogs(machine.receive(.ghostNotInRoom(again, reason: "M_FORBIDDEN"), in: room()))
        #expect(final.first == .portal(.ghostSaved(again.setup!.saved)))
        #expect(final.contains { if case .perform(.recordRefused) = $0 { true } else { false } })
        #expect(sent(final) == nil)
    }

    /// A rejoin plans over the table as it will be: the ghost's saved state (here the only one that knows the
    /// occupant id's real JID) counts, as left, so the same ghost joins again rather than a second one.
    @Test func aRejoinPlansOverTheGhostsSavedStateAsIfItHadLeft() {
        let realJID = JID("romeo@montague.example")!
        let ghost = f.machine.configuration.ghostUserID(realJID.bare.description)!
        let saved = RoomGhost(room: f.room, user: ghost, nick: "romeo", occupantID: OccupantID("occ-r"), realJID: realJID, joined: true)
        let message = f.groupchat("romeo", "hi", stanzaID: "s9", occupantID: "occ-r")
        let table = GhostMachine(configuration: f.machine.xmppOccupants.configuration)
        let plan = table.plan(nick: "romeo", occupantID: message.occupantID, realJID: nil, joinedNow: false, rejoining: (ghost, saved))
        #expect(plan?.ghost == ghost)
        #expect(plan?.setup?.join == true)
        #expect(plan?.setup?.identity == realJID.bare.description)
        let unsaved = table.plan(nick: "romeo", occupantID: message.occupantID, realJID: nil, joinedNow: false)
        #expect(unsaved?.ghost != ghost, "without the saved state the occupant id alone names another ghost")
    }
}
