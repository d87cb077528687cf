@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing

/// Typing and read markers through the portal machine, both ways: who they come from, what they become, and the
/// throttles (time moved by hand; flushes are events the machine asked the portal for).
@Suite struct PortalEphemeralMachineTests {
    typealias Action = PortalStateMachine.Action

    /// An active room where alice has a puppet and the occupant `nick` has a ghost joined to the Matrix room.
    func activeRoom(ghostOf nick: String = "romeo") -> (MachineFixture, UserID) {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        guard case .ghosts(.prepare(let setup))? = f.act(.xmppPresence(f.presence(nick))).first else {
            Issue.record("no ghost set up for \(nick)")
            return (f, f.bot)
        }
        _ = f.act(.ghosts(.prepared(setup, error: nil)))
        return (f, setup.ghost)
    }

    func signal(_ f: MachineFixture, from nick: String, _ state: ChatState? = nil, displayed: String? = nil, body: String? = nil,
                archived: Bool = false) -> RoomMessage {
        var message = RoomMessage(room: f.muc, nick: nick, to: f.naming.botOccupant, body: body, fromArchive: archived)
        message.signals = ChatSignals(chatState: state, displayed: displayed)
        return message
    }

    func mapping(_ f: MachineFixture, event: String, stanza: String?, kind: MessageMapping.Kind = .message) -> MessageMapping {
        MessageMapping(room: f.room, eventID: EventID(event), stanzaID: stanza.flatMap(StanzaID.init), originID: nil,
                       direction: .xmppToMatrix, sender: .occupant(.nick("romeo")), state: .delivered, kind: kind)
    }

    // MARK: XMPP → Matrix typing

    @Test func composingShowsTheGhostTypingAndPausedClearsItAfterTheFlipWindow() {
        var (f, ghost) = activeRoom()
        #expect(f.act(.xmppMessage(signal(f, from: "romeo", .composing))) == [.ephemeral(.send(.typing(ghost: ghost, true)))])
        // Still composing a second later: the notice stands (refreshed only after 10 s).
        #expect(f.act(.xmppMessage(signal(f, from: "romeo", .composing)), at: f.t0 + .seconds(1)) == [])
        // Paused within the 2 s window: waits for a flush.
        #expect(f.act(.xmppMessage(signal(f, from: "romeo", .paused)), at: f.t0 + .seconds(1))
                == [.ephemeral(.scheduleFlush(at: f.t0 + .seconds(2)))])
        #expect(f.act(.flushEphemeral, at: f.t0 + .seconds(2)) == [.ephemeral(.send(.typing(ghost: ghost, false)))])
        // Composing again after the window goes out at once; a long composition is refreshed after 10 s.
        #expect(f.act(.xmppMessage(signal(f, from: "romeo", .composing)), at: f.t0 + .seconds(5))
                == [.ephemeral(.send(.typing(ghost: ghost, true)))])
        #expect(f.act(.xmppMessage(signal(f, from: "romeo", .composing)), at: f.t0 + .seconds(15))
                == [.ephemeral(.send(.typing(ghost: ghost, true)))])
    }

    @Test func aFloodOfChatStatesFromOneOccupantBecomesAtMostOneTypingChangePerWindow() {
        var (f, ghost) = activeRoom()
        var sends: [Action] = []
        for index in 0..<200 {
            let state: ChatState = index.isMultiple(of: 2) ? .composing : .paused
            sends += f.act(.xmppMessage(signal(f, from: "romeo", state)), at: f.t0 + .milliseconds(5 * index))
                .filter { if case .ephemeral(.send) = $0 { true } else { false } }
        }
        #expect(sends == [.ephemeral(.send(.typing(ghost: ghost, true)))], "one notice for the first second")
        // The last state (paused) goes out when the window closes; nothing else waits.
        #expect(f.act(.flushEphemeral, at: f.t0 + .seconds(2)) == [.ephemeral(.send(.typing(ghost: ghost, false)))])
        #expect(f.machine.ephemeral.nextDeadline == nil)
    }

    @Test func aMessageWithABodyEndsTypingAndIsBridgedAsUsual() {
        var (f, ghost) = activeRoom()
        _ = f.act(.xmppMessage(signal(f, from: "romeo", .composing)))
        var message = f.groupchat("romeo", "done typing", stanzaID: "s9")
        message.signals = ChatSignals(chatState: .active)
        #expect(f.act(.xmppMessage(message), at: f.t0 + .seconds(3)) == [.ephemeral(.send(.typing(ghost: ghost, false))), .matrixDelivery(.lookUpBridged(message))])
        // The next message (no chat state) from a ghost no longer typing costs nothing extra.
        let next = f.groupchat("romeo", "more", stanzaID: "s10")
        #expect(f.act(.xmppMessage(next), at: f.t0 + .seconds(4)) == [.matrixDelivery(.lookUpBridged(next))])
    }

    @Test func chatStatesOfOurOwnOccupantsOfUnknownOccupantsAndFromTheArchiveAreIgnored() {
        var (f, _) = activeRoom()
        #expect(f.act(.xmppMessage(signal(f, from: "Alice", .composing))) == [], "alice's puppet: our own, echoed by the room")
        #expect(f.act(.xmppMessage(signal(f, from: "Matrix", .composing))) == [], "the bridge's own occupant")
        #expect(f.act(.xmppMessage(signal(f, from: "stranger", .composing))) == [], "no ghost (no presence seen)")
        #expect(f.act(.xmppMessage(signal(f, from: "romeo", .composing, archived: true))) == [])
        #expect(f.act(.xmppMessage(signal(f, from: "romeo", .paused))) == [], "nothing to clear")
        var other = signal(f, from: "romeo", .composing)
        other.to = f.puppetJID(f.alice)
        #expect(f.act(.xmppMessage(other)) == [], "another occupant's copy")
    }

    // MARK: Matrix → XMPP typing

    @Test func matrixTypingBecomesChatStatesFromThePuppetDebounced() {
        var (f, ghost) = activeRoom()
        let puppet = f.puppetJID(f.alice)
        // Ghosts and the bot in the list are ours: never echoed.
        #expect(f.act(.matrixEphemeral(.typing([f.alice, ghost, f.bot])))
                == [.ephemeral(.send(.chatState(user: f.alice, occupant: puppet, .composing)))])
        #expect(f.act(.matrixEphemeral(.typing([f.alice, ghost]))) == [], "the same list again: no change")
        // Stops a second later: paused waits for the 3 s window.
        #expect(f.act(.matrixEphemeral(.typing([])), at: f.t0 + .seconds(1)) == [.ephemeral(.scheduleFlush(at: f.t0 + .seconds(3)))])
        #expect(f.act(.flushEphemeral, at: f.t0 + .seconds(3)) == [.ephemeral(.send(.chatState(user: f.alice, occupant: puppet, .paused)))])
        // Starts and stops within one window: only the first change goes out, the last state wins at the flush.
        #expect(f.act(.matrixEphemeral(.typing([f.alice])), at: f.t0 + .seconds(4)) == [.ephemeral(.scheduleFlush(at: f.t0 + .seconds(6)))])
        #expect(f.act(.matrixEphemeral(.typing([])), at: f.t0 + .seconds(5)) == [])
        #expect(f.act(.flushEphemeral, at: f.t0 + .seconds(6)) == [], "back to paused before the window closed: nothing")
    }

    @Test func afterHerMessageTheUserIsActiveSoStoppingSendsNoPaused() {
        var (f, _) = activeRoom()
        let puppet = f.puppetJID(f.alice)
        _ = f.act(.matrixEphemeral(.typing([f.alice])))
        // Her message went out with <active/> (SessionXMPPLink adds it to every message with a body).
        #expect(f.act(.xmppDelivery(.groupchatSent(f.outgoing(f.text(1, from: f.alice)), nil)), at: f.t0 + .seconds(4)) == [])
        #expect(f.act(.matrixEphemeral(.typing([])), at: f.t0 + .seconds(5)) == [], "active already: no paused")
        // Typing again right after: composing waits out the window that began with the message.
        #expect(f.act(.matrixEphemeral(.typing([f.alice])), at: f.t0 + .seconds(6)) == [.ephemeral(.scheduleFlush(at: f.t0 + .seconds(7)))])
        #expect(f.act(.flushEphemeral, at: f.t0 + .seconds(7)) == [.ephemeral(.send(.chatState(user: f.alice, occupant: puppet, .composing)))])
        // A user whose typing was never bridged leaves no trace.
        #expect(f.act(.xmppDelivery(.groupchatSent(f.outgoing(f.text(2, from: f.bob)), nil))) == [])
        #expect(f.machine.ephemeral.chatStates.lastSent(f.bob) == nil)
    }

    @Test func matrixTypingOfUsersWithoutAJoinedPuppetIsNotBridged() {
        var (f, _) = activeRoom()
        #expect(f.act(.matrixEphemeral(.typing([f.bob]))) == [], "bob has no puppet")
        #expect(f.act(.matrixEphemeral(.typing([]))) == [], "and so no paused either")
        _ = f.act(.xmppDisconnected)
        #expect(f.act(.matrixEphemeral(.typing([f.alice]))) == [], "the XMPP side is down")
    }

    // MARK: Read markers

    @Test func aMatrixReadReceiptBecomesADisplayedMarkerNamingTheStanzaIDThrottledPerUser() {
        var (f, ghost) = activeRoom()
        let puppet = f.puppetJID(f.alice)
        let e1 = EventID("$x1")!, e2 = EventID("$x2")!, e3 = EventID("$x3")!
        let first = EphemeralMachine.ReadMarkerQuery.matrix([f.alice: e1])
        #expect(f.act(.matrixEphemeral(.read([f.alice: e1, ghost: e1, f.bob: e1]))) == [.ephemeral(.resolveReadMarkers(first))],
                "only users with a puppet in the MUC")
        #expect(f.act(.ephemeral(.readMarkersResolved(first, [mapping(f, event: "$x1", stanza: "s1")])))
                == [.ephemeral(.send(.displayed(user: f.alice, occupant: puppet, id: "s1")))])
        // Two more within 10 s: the latest goes out when the window closes.
        for (event, stanza, second) in [(e2, "s2", 2), (e3, "s3", 4)] {
            let query = EphemeralMachine.ReadMarkerQuery.matrix([f.alice: event])
            #expect(f.act(.matrixEphemeral(.read([f.alice: event])), at: f.t0 + .seconds(second)) == [.ephemeral(.resolveReadMarkers(query))])
            let scheduled = f.act(.ephemeral(.readMarkersResolved(query, [mapping(f, event: event.rawValue, stanza: stanza)])), at: f.t0 + .seconds(second))
            #expect(scheduled == (second == 2 ? [.ephemeral(.scheduleFlush(at: f.t0 + .seconds(10)))] : []))
        }
        #expect(f.act(.flushEphemeral, at: f.t0 + .seconds(10)) == [.ephemeral(.send(.displayed(user: f.alice, occupant: puppet, id: "s3")))])
    }

    @Test func receiptsOnUnmappedOrUnreflectedEventsAreDroppedWithADebugLine() {
        var (f, _) = activeRoom()
        let query = EphemeralMachine.ReadMarkerQuery.matrix([f.alice: EventID("$notice")!])
        let actions = f.machine.receive(.ephemeral(.readMarkersResolved(query, [])), now: f.t0)
        guard case .ephemeral(.log(let entry))? = actions.first, actions.count == 1 else { Issue.record("\(actions)"); return }
        #expect(entry.level == .debug && entry.metadata["matrix.event.id"] == "$notice")
        // Ours, still waiting for its reflection: no stanza-id to name it yet.
        let unreflected = EphemeralMachine.ReadMarkerQuery.matrix([f.alice: EventID("$mine")!])
        #expect(f.act(.ephemeral(.readMarkersResolved(unreflected, [mapping(f, event: "$mine", stanza: nil)]))) == [])
        // A reaction is not a message one reads.
        let reaction = EphemeralMachine.ReadMarkerQuery.matrix([f.alice: EventID("$re")!])
        #expect(f.act(.ephemeral(.readMarkersResolved(reaction, [mapping(f, event: "$re", stanza: "s5", kind: .reaction)]))) == [])
    }

    @Test func anOccupantsDisplayedMarkerBecomesItsGhostsReceiptOnTheMappedEvent() {
        var (f, ghost) = activeRoom()
        let marker = signal(f, from: "romeo", displayed: "s1")
        let query = EphemeralMachine.ReadMarkerQuery.xmpp(ghost: ghost, id: "s1")
        #expect(f.act(.xmppMessage(marker)) == [.ephemeral(.resolveReadMarkers(query))])
        #expect(f.act(.ephemeral(.readMarkersResolved(query, [mapping(f, event: "$x1", stanza: "s1")])))
                == [.ephemeral(.send(.readReceipt(ghost: ghost, EventID("$x1")!)))])
        // Unknown id: dropped. Our puppet's own markers (reflected by the room) and archived ones: ignored.
        let unknown = EphemeralMachine.ReadMarkerQuery.xmpp(ghost: ghost, id: "nope")
        #expect(f.act(.ephemeral(.readMarkersResolved(unknown, [])), at: f.t0 + .seconds(5)) == [])
        #expect(f.act(.xmppMessage(signal(f, from: "Alice", displayed: "s1"))) == [])
        #expect(f.act(.xmppMessage(signal(f, from: "romeo", displayed: "s1", archived: true))) == [])
    }
}
