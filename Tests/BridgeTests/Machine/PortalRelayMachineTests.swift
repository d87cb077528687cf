@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix
import Media
import Testing
import XMPP

/// Client mode through the portal machine: no Matrix user gets a puppet; each message is mapped, then goes from the
/// bridge's own occupant with the sender's name in the relay format; the relay's reactions are every Matrix user's together.
@Suite struct PortalRelayMachineTests {
    struct Failure: Error, CustomStringConvertible { var description: String }

    /// The delivery a Matrix event became (its one action: the mapping before it goes out).
    func delivery(_ f: inout MachineFixture, _ queued: QueuedMatrixEvent) throws -> PortalStateMachine.XMPPDelivery {
        let actions = f.act(.matrixEvents([queued]))
        guard actions.count == 1, case .xmppDelivery(.insertMapping(let mapping, _, let delivery, _)) = actions[0] else {
            throw Failure(description: "expected one insertMapping, got \(actions)")
        }
        #expect(mapping.nick == "Matrix", "the MUC knows the message by the relay's nick")
        return delivery
    }

    @Test func membersGetNoPuppetsAndTheirMessagesGoFromTheRelayNamed() throws {
        var f = MachineFixture(relay: RelayFormat())
        f.activate(members: [f.alice: "Alice", f.bob: "Alice"])
        #expect(f.machine.puppets.isEmpty, "no puppet joined at the activation")

        let fromAlice = try delivery(&f, f.text(1, from: f.alice, "hello"))
        #expect(fromAlice.stanza.body == "<Alice> hello")
        #expect(f.act(.xmppDelivery(.mappingInserted(fromAlice, inserted: true)))
                == [.xmppDelivery(.sendGroupchat(fromAlice, from: f.naming.botOccupant))], "straight from the relay: no join")
        _ = f.act(.xmppDelivery(.groupchatSent(fromAlice, nil)))

        let fromBob = try delivery(&f, f.text(2, from: f.bob, "waves", msgtype: .emote))
        #expect(fromBob.stanza.body == "* Alice (2) waves", "a namesake is told apart")
        #expect(f.machine.puppets.isEmpty)
    }

    @Test func theRelaysReflectionIsAReceiptNotAMessageForMatrix() throws {
        var f = MachineFixture(relay: RelayFormat())
        f.activate(members: [f.alice: "Alice"])
        let sent = try delivery(&f, f.text(1, from: f.alice, "hello"))
        _ = f.act(.xmppDelivery(.mappingInserted(sent, inserted: true)))
        _ = f.act(.xmppDelivery(.groupchatSent(sent, nil)))
        let reflection = f.groupchat("Matrix", "<Alice> hello", stanzaID: "s9", originID: sent.originID.rawValue)
        let actions = f.act(.xmppMessage(reflection))
        #expect(actions.contains(.matrixDelivery(.recordReflection(originID: sent.originID, stanzaID: StanzaID("s9")))), "\(actions)")
        #expect(!actions.contains { if case .matrixDelivery(.send) = $0 { true } else { false } }, "\(actions)")
    }

    /// The relay reacts for every Matrix user: its XEP-0444 set is the union of their keys — bob's 👍 beside alice's
    /// keeps one 👍, and alice taking hers back leaves it (bob's), while her ❤️ goes.
    @Test func theRelaysReactionSetIsEveryMatrixUsersKeysTogether() throws {
        var f = MachineFixture(relay: RelayFormat())
        f.activate(members: [f.alice: "Alice", f.bob: "Bob"])
        let x = EventID("$x")!
        let target = MessageMapping(room: f.room, eventID: x, stanzaID: StanzaID("s1"), originID: nil, direction: .xmppToMatrix,
                                    sender: .occupant(.nick("Romeo")), state: .delivered, body: "hi")
        func reaction(_ seq: Int64, _ user: UserID, _ key: String) -> QueuedMatrixEvent {
            QueuedMatrixEvent(seq: seq, event: MatrixRoomEvent(eventID: EventID("$r\(seq)")!, room: f.room, sender: user,
                                                             content: .reaction(target: x, key: key)))
        }
        func stored(_ seq: Int64, _ user: UserID, _ key: String) -> Reaction {
            Reaction(room: f.room, target: x, reactor: .matrix(user), key: key, eventID: EventID("$r\(seq)")!)
        }
        /// The set the relay sends for `queued`, given what the store holds.
        func relaySet(_ queued: QueuedMatrixEvent, own: [Reaction], everyone: [Reaction], redacted: Reaction? = nil) throws -> [String]? {
            guard case .xmppDelivery(.resolveMatrixTargets)? = f.act(.matrixEvents([queued])).last else { throw Failure(description: "no lookup") }
            var targets = PortalStateMachine.MatrixTargets()
            targets.reacted = target
            targets.reactions = own
            targets.relayedReactions = everyone
            targets.redactedReaction = redacted
            let resolved = f.act(.xmppDelivery(.targetsResolved(queued, targets)))
            guard case .xmppDelivery(.insertMapping(let mapping, _, let delivery, _))? = resolved.first else { return nil }
            #expect(mapping.nick == "Matrix")
            _ = f.act(.xmppDelivery(.mappingInserted(delivery, inserted: true)))
            _ = f.act(.xmppDelivery(.groupchatSent(delivery, nil)))
            #expect(delivery.stanza.references.reactions?.id == "s1")
            return delivery.stanza.references.reactions?.keys
        }

        #expect(try relaySet(reaction(1, f.alice, "👍"), own: [], everyone: []) == ["👍"])
        #expect(try relaySet(reaction(2, f.alice, "❤️"), own: [stored(1, f.alice, "👍")], everyone: [stored(1, f.alice, "👍")]) == ["👍", "❤️"])
        let all = [stored(1, f.alice, "👍"), stored(2, f.alice, "❤️")]
        #expect(try relaySet(reaction(3, f.bob, "👍"), own: [], everyone: all) == ["👍", "❤️"], "one 👍 for both")
        let everyone = all + [stored(3, f.bob, "👍")]
        // alice takes her 👍 back: bob's stays in the set; then her ❤️: gone.
        let undo = QueuedMatrixEvent(seq: 4, event: MatrixRoomEvent(eventID: EventID("$u4")!, room: f.room, sender: f.alice,
                                                                   content: .redaction(target: EventID("$r1")!, reason: nil)))
        #expect(try relaySet(undo, own: all, everyone: everyone, redacted: stored(1, f.alice, "👍")) == ["❤️", "👍"])
        let undoHeart = QueuedMatrixEvent(seq: 5, event: MatrixRoomEvent(eventID: EventID("$u5")!, room: f.room, sender: f.alice,
                                                                        content: .redaction(target: EventID("$r2")!, reason: nil)))
        #expect(try relaySet(undoHeart, own: [stored(2, f.alice, "❤️")], everyone: [stored(2, f.alice, "❤️"), stored(3, f.bob, "👍")],
                             redacted: stored(2, f.alice, "❤️")) == ["👍"])
        // The same key again from the same user changes nothing and sends nothing.
        #expect(try relaySet(reaction(6, f.bob, "👍"), own: [stored(3, f.bob, "👍")], everyone: [stored(3, f.bob, "👍")]) == nil)
    }

    @Test func aFilesCaptionSaysWhoSentIt() throws {
        var f = MachineFixture(mediaLinks: MediaLinkSigner(publicBase: "https://bridge.example/media", secret: "k"), relay: RelayFormat())
        f.activate(members: [f.alice: "Alice"])
        let attachment = MatrixAttachment(mxc: "mxc://localhost/AbCd", fileName: "cat.png", info: MediaInfo(mimeType: "image/png", size: 42))
        let image = QueuedMatrixEvent(seq: 1, event: MatrixRoomEvent(eventID: EventID("$e1")!, room: f.room, sender: f.alice,
                                                                    content: .message(msgtype: .image, body: "cat.png", details: MessageDetails(media: attachment))))
        let sent = try delivery(&f, image)
        #expect(sent.stanza.body?.hasSuffix("/cat.png") == true, "the file's body is its URL alone")
        #expect(sent.stanza.caption == "<Alice> cat.png")
        _ = f.act(.xmppDelivery(.mappingInserted(sent, inserted: true)))
        #expect(f.act(.xmppDelivery(.groupchatSent(sent, nil))).first
                == .xmppDelivery(.sendCaption("<Alice> cat.png", of: sent.originID, from: f.naming.botOccupant)))
    }
}
