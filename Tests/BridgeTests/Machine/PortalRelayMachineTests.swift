@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix
import Media
import Testing
import XMPP

/// Client mode through the portal machine: no Matrix user gets a puppet; each message is mapped, then goes from the
/// bridge's own occupant with the sender's name in the relay format; reactions are not relayed (yet), never wrongly.
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

    @Test func reactionsAreNotRelayedRatherThanOneUsersSetReplacingAnothers() throws {
        var f = MachineFixture(relay: RelayFormat())
        f.activate(members: [f.alice: "Alice"])
        let reaction = QueuedMatrixEvent(seq: 4, event: MatrixRoomEvent(eventID: EventID("$r4")!, room: f.room, sender: f.alice,
                                                                       content: .reaction(target: EventID("$x")!, key: "👍")))
        let actions = f.act(.matrixEvents([reaction]))
        guard case .xmppDelivery(.resolveMatrixTargets)? = actions.last else { throw Failure(description: "\(actions)") }
        let target = MessageMapping(room: f.room, eventID: EventID("$x")!, stanzaID: StanzaID("s1"), originID: nil, direction: .xmppToMatrix,
                                    sender: .occupant(.nick("Romeo")), state: .delivered, body: "hi")
        var targets = PortalStateMachine.MatrixTargets()
        targets.reacted = target
        let resolved = f.act(.xmppDelivery(.targetsResolved(reaction, targets)))
        #expect(resolved.contains(.xmppDelivery(.dequeue(seq: 4))))
        #expect(!resolved.contains { if case .xmppDelivery(.insertMapping) = $0 { true } else { false } })
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
