@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing

/// The ephemeral sub-machine alone, over a room view written out by hand: its throttles, the flush it asks for and
/// what a flush sends to whoever is still there. (Through the portal machine: `PortalEphemeralMachineTests`.)
@Suite struct EphemeralMachineTests {
    /// The machine and the room it sees: romeo's ghost and alice's puppet, both in, in a room with stanza-ids.
    struct Fixture {
        let t0 = ContinuousClock.now
        let romeo = UserID("@_xmpp_romeo:localhost")!
        let alice = UserID("@alice:localhost")!
        let alicePuppet = JID("lounge@conference.localhost/Alice")!
        let room = RoomID("!room:localhost")!
        var machine = EphemeralMachine()
        /// Whether romeo's ghost is in the Matrix room and alice's puppet in the MUC.
        var romeoJoined = true, aliceJoined = true
        var stanzaIDs: Bool? = true

        /// The room as the machine sees it: romeo (an occupant) and alice (a Matrix user).
        struct View: EphemeralMachine.Room {
            let romeo: UserID, alice: UserID, puppet: JID
            let romeoJoined: Bool, aliceJoined: Bool
            let stanzaIDs: Bool?

            func ghostOfOccupant(_ nick: String) -> UserID? { nick == "romeo" ? romeo : nil }
            func joinedGhost(_ nick: String, _ realJID: JID?) -> UserID? { nick == "romeo" && romeoJoined ? romeo : nil }
            func isGhostJoined(_ ghost: UserID) -> Bool { ghost == romeo && romeoJoined }
            func joinedPuppet(_ user: UserID) -> JID? { user == alice && aliceJoined ? puppet : nil }
            func isBridged(_ user: UserID) -> Bool { !user.localpart.hasPrefix("_xmpp_") }
        }

        var view: View {
            View(romeo: romeo, alice: alice, puppet: alicePuppet, romeoJoined: romeoJoined, aliceJoined: aliceJoined, stanzaIDs: stanzaIDs)
        }

        mutating func act(_ input: EphemeralMachine.Input, at offset: Duration = .zero) -> [EphemeralMachine.Action] {
            machine.receive(input, in: view, now: t0 + offset)
        }

        func romeoSays(_ state: ChatState?, body: String? = nil, displayed: String? = nil) -> RoomMessage {
            var message = RoomMessage(room: JID("lounge@conference.localhost")!, nick: "romeo", body: body)
            message.signals = ChatSignals(chatState: state, displayed: displayed)
            return message
        }

        func mapping(event: String, stanza: String?, xmppID: String? = nil) -> MessageMapping {
            MessageMapping(room: room, eventID: EventID(event), stanzaID: stanza.flatMap(StanzaID.init), originID: nil,
                           direction: .xmppToMatrix, sender: .occupant(.nick("romeo")), state: .delivered,
                           xmppID: xmppID.flatMap(StanzaAttributeID.init))
        }
    }

    @Test func oneFlushIsAskedForTheEarliestWaitingValueAndSendsOnlyToThoseStillThere() {
        var f = Fixture()
        #expect(f.act(.occupantTyping(f.romeoSays(.composing))) == [.send(.typing(ghost: f.romeo, true))])
        #expect(f.act(.matrix(.typing([f.alice]))) == [.send(.chatState(user: f.alice, occupant: f.alicePuppet, .composing))])
        // Both stop at once: romeo's flip waits 2 s, alice's 3 s; one flush, for the earlier.
        #expect(f.act(.occupantTyping(f.romeoSays(.paused)), at: .seconds(1)) == [.scheduleFlush(at: f.t0 + .seconds(2))])
        #expect(f.act(.matrix(.typing([])), at: .seconds(1)) == [], "due later than the flush already asked for")
        // Romeo's ghost left meanwhile: its notice is dropped; the flush asks for the next one.
        f.romeoJoined = false
        #expect(f.act(.flush, at: .seconds(2)) == [.scheduleFlush(at: f.t0 + .seconds(3))])
        #expect(f.act(.flush, at: .seconds(3)) == [.send(.chatState(user: f.alice, occupant: f.alicePuppet, .paused))])
        #expect(f.machine.nextDeadline == nil)
    }

    @Test func afterAMessageWithABodyStoppingIsNoPaused() {
        var f = Fixture()
        _ = f.act(.matrix(.typing([f.alice])))
        #expect(f.act(.puppetSent(f.alice, withBody: false), at: .seconds(4)) == [])
        #expect(f.act(.puppetSent(f.alice, withBody: true), at: .seconds(4)) == [])
        #expect(f.act(.matrix(.typing([])), at: .seconds(8)) == [], "active already")
        #expect(f.machine.chatStates.lastSent(f.alice) == .active)
    }

    @Test func inARoomWithoutStanzaIDsAMarkerNamesTheMessagesIDAttribute() {
        var f = Fixture()
        f.stanzaIDs = false
        let query = EphemeralMachine.ReadMarkerQuery.matrix([f.alice: EventID("$x1")!])
        #expect(f.act(.matrix(.read([f.alice: EventID("$x1")!, f.romeo: EventID("$x1")!]))) == [.resolveReadMarkers(query)])
        #expect(f.act(.readMarkersResolved(query, [f.mapping(event: "$x1", stanza: nil, xmppID: "m1")]))
                == [.send(.displayed(user: f.alice, occupant: f.alicePuppet, id: "m1"))])
        #expect(f.act(.readMarkersResolved(query, nil)) == [], "the store could not be read: dropped")
    }

    @Test func anOccupantsMarkerIsResolvedThenBecomesOneReceiptPerWindow() {
        var f = Fixture()
        let query = EphemeralMachine.ReadMarkerQuery.xmpp(ghost: f.romeo, id: "s1")
        #expect(f.act(.occupantDisplayed(f.romeoSays(nil, displayed: "s1"))) == [.resolveReadMarkers(query)])
        #expect(f.act(.occupantDisplayed(f.romeoSays(nil, body: "hi", displayed: "s1"))) == [], "not signal-only")
        #expect(f.act(.readMarkersResolved(query, [f.mapping(event: "$x1", stanza: "s1")])) == [.send(.readReceipt(ghost: f.romeo, EventID("$x1")!))])
        let next = EphemeralMachine.ReadMarkerQuery.xmpp(ghost: f.romeo, id: "s2")
        #expect(f.act(.readMarkersResolved(next, [f.mapping(event: "$x2", stanza: "s2")]), at: .seconds(1)) == [.scheduleFlush(at: f.t0 + .seconds(2))])
        #expect(f.act(.flush, at: .seconds(2)) == [.send(.readReceipt(ghost: f.romeo, EventID("$x2")!))])
    }
}
