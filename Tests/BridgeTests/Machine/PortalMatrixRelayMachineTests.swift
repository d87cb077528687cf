@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing

/// Matrix client mode through the portal machine: an occupant's message goes from its (name-only) ghost with an
/// MSC4144 profile and the relay's fallback, and the occupants' reactions share the account's: a key stays while any
/// occupant holds it.
@Suite struct PortalMatrixRelayMachineTests {
    struct Failure: Error, CustomStringConvertible { var description: String }

    /// The delivery an XMPP message became.
    func sent(_ f: inout MachineFixture, _ message: RoomMessage, targets: PortalStateMachine.XMPPTargets = .init()) throws
        -> PortalStateMachine.MatrixDelivery {
        _ = f.act(.xmppMessage(message))
        let actions = f.act(.matrixDelivery(.lookedUp(message, bridged: false, targets: targets)))
        guard case .matrixDelivery(.send(let delivery))? = actions.last else { throw Failure(description: "no send: \(actions)") }
        return delivery
    }

    @Test func anOccupantsMessageCarriesItsProfileAndTheFallback() throws {
        var f = MachineFixture(matrixRelay: MatrixRelayFormat())
        f.activate()
        let delivery = try sent(&f, f.groupchat("Romeo", "hello", occupantID: "occ1"))
        guard case .message(let outgoing, _)? = delivery.sends.first else { throw Failure(description: "\(delivery.sends)") }
        #expect(outgoing.body == "Romeo: hello")
        #expect(outgoing.html == "<strong data-mx-profile-fallback>Romeo: </strong>hello")
        #expect(outgoing.profile == PerMessageProfile(id: f.ghost(of: "Romeo", occupantID: "occ1").rawValue, displayname: "Romeo", hasFallback: true))
        #expect(delivery.ghost == f.ghost(of: "Romeo", occupantID: "occ1"), "the ghost stays the occupant's name in the map")
    }

    @Test func aKeyStaysWhileAnyOccupantHoldsIt() throws {
        var f = MachineFixture(matrixRelay: MatrixRelayFormat())
        f.activate()
        let target = EventID("$target")!
        let mapped = MessageMapping(room: f.room, eventID: target, stanzaID: StanzaID("s0"), originID: nil, direction: .matrixToXMPP,
                                    sender: .matrix(f.alice), state: .delivered, body: "hi")
        let romeo = MessageSender.occupant(.occupantID(OccupantID("occ-romeo")!))
        let juliet = MessageSender.occupant(.occupantID(OccupantID("occ-juliet")!))
        func reactions(_ nick: String, _ occupant: String, _ keys: [String], stanzaID: String) -> RoomMessage {
            var message = f.groupchat(nick, "", stanzaID: stanzaID, occupantID: occupant)
            message.body = nil
            message.references.reactions = .init(id: "s0", keys: keys)
            return message
        }
        let bots = Reaction(room: f.room, target: target, reactor: juliet, key: "👍", eventID: EventID("$thumbs")!)

        // Juliet holds 👍 (the account's event $thumbs): Romeo's 👍 sends nothing and shares it.
        var targets = PortalStateMachine.XMPPTargets()
        targets.reacted = mapped
        targets.othersReactions = [bots]
        let romeoThumbs = reactions("Romeo", "occ-romeo", ["👍"], stanzaID: "s1")
        _ = f.act(.xmppMessage(romeoThumbs))
        let shared = f.act(.matrixDelivery(.lookedUp(romeoThumbs, bridged: false, targets: targets)))
        guard case .matrixDelivery(.recordBridged(_, let change))? = shared.last else { throw Failure(description: "\(shared)") }
        #expect(change.added.map(\.key) == ["👍"] && change.added.first?.eventID == nil && change.added.first?.reactor == romeo)

        // Juliet takes hers back while Romeo holds 👍: no redaction, Romeo's row takes the event.
        targets.reactions = [bots]
        targets.othersReactions = [Reaction(room: f.room, target: target, reactor: romeo, key: "👍", eventID: nil)]
        let julietNone = reactions("Juliet", "occ-juliet", [], stanzaID: "s2")
        _ = f.act(.xmppMessage(julietNone))
        let passed = f.act(.matrixDelivery(.lookedUp(julietNone, bridged: false, targets: targets)))
        guard case .matrixDelivery(.recordBridged(_, let handover))? = passed.last else { throw Failure(description: "\(passed)") }
        #expect(handover.removed == [bots])
        #expect(handover.added == [Reaction(room: f.room, target: target, reactor: romeo, key: "👍", eventID: EventID("$thumbs")!)])

        // Then Romeo takes it back, alone: the account's reaction is redacted.
        targets.reactions = [Reaction(room: f.room, target: target, reactor: romeo, key: "👍", eventID: EventID("$thumbs")!)]
        targets.othersReactions = []
        let romeoNone = reactions("Romeo", "occ-romeo", [], stanzaID: "s3")
        let delivery = try sent(&f, romeoNone, targets: targets)
        guard case .redaction(let redacted, _, _)? = delivery.sends.first else { throw Failure(description: "\(delivery.sends)") }
        #expect(redacted == EventID("$thumbs")!)
    }

    @Test func withoutTheRelayEachOccupantReactsForItself() throws {
        var f = MachineFixture()
        f.activate()
        let target = EventID("$target")!
        var targets = PortalStateMachine.XMPPTargets()
        targets.reacted = MessageMapping(room: f.room, eventID: target, stanzaID: StanzaID("s0"), originID: nil, direction: .matrixToXMPP,
                                         sender: .matrix(f.alice), state: .delivered, body: "hi")
        targets.othersReactions = [Reaction(room: f.room, target: target, reactor: .occupant(.occupantID(OccupantID("occ-juliet")!)),
                                            key: "👍", eventID: EventID("$thumbs")!)]
        var message = f.groupchat("Romeo", "", stanzaID: "s1", occupantID: "occ-romeo")
        message.body = nil
        message.references.reactions = .init(id: "s0", keys: ["👍"])
        let delivery = try sent(&f, message, targets: targets)
        guard case .reaction(_, let key, _)? = delivery.sends.first else { throw Failure(description: "\(delivery.sends)") }
        #expect(key == "👍", "a ghost's reaction of its own")
    }
}
