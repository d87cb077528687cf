@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import MessageFormatting
import Testing

/// The MUC's traffic through the portal machine: exactly once to Matrix, receipts, retries, refusals, ghosts.
@Suite struct PortalXMPPInboundMachineTests {
    func delivery(_ f: MachineFixture, _ message: RoomMessage, setup: Bool, join: Bool = true,
                  occupantID: String? = nil) -> PortalStateMachine.MatrixDelivery {
        let ghost = f.ghost(of: message.nick, occupantID: occupantID)
        let identity = GhostMachine.identity(muc: f.muc, nick: message.nick, occupantID: occupantID.flatMap(OccupantID.init), realJID: nil)
        let saved = RoomGhost(room: f.room, user: ghost, nick: message.nick, occupantID: occupantID.flatMap(OccupantID.init), realJID: nil, joined: true)
        var outgoing = MessageTranslation.toMatrix(message.body!)
        outgoing.html = StylingToHTML.convert(outgoing.body)
        return .init(message: message, key: message.stanzaID!, ghost: ghost,
                     setup: setup ? .init(ghost: ghost, identity: identity, nick: message.nick, join: join, saved: saved) : nil,
                     sends: [.message(outgoing, txnID: f.naming.matrixTxnID(room: f.muc, stanzaID: message.stanzaID!))],
                     record: recorded(f, message, eventID: nil, occupantID: occupantID))
    }

    /// The map entry the machine writes for a plain XMPP message.
    func recorded(_ f: MachineFixture, _ message: RoomMessage, eventID: EventID?, occupantID: String? = nil) -> MessageMapping {
        MessageMapping(room: f.room, eventID: eventID, stanzaID: message.stanzaID, originID: message.originID, direction: .xmppToMatrix,
                       sender: .occupant(occupantID.flatMap(OccupantID.init).map { .occupantID($0) } ?? .nick(message.nick)),
                       state: .delivered, nick: message.nick, excerpt: message.body.map(RichTranslation.excerpt))
    }

    @Test func aMessageIsLookedUpSentAsItsGhostAndRecordedOnce() {
        var f = MachineFixture()
        f.activate()
        let message = f.groupchat("romeo", "  hi <&> 😀\nline2 ", occupantID: "occ1")
        #expect(f.act(.xmppMessage(message)) == [.matrixDelivery(.lookUpBridged(message))])
        let sending = delivery(f, message, setup: true, occupantID: "occ1")
        #expect(f.act(.matrixDelivery(.lookedUp(message, bridged: false))) == [.matrixDelivery(.send(sending))])
        #expect(f.act(.matrixDelivery(.delivered(sending, eventIDs: [EventID("$x1")!])))
                == [.matrixDelivery(.recordBridged(recorded(f, message, eventID: EventID("$x1")!, occupantID: "occ1")))])
        // A second message from the same occupant needs no ghost setup.
        let second = f.groupchat("romeo", "again", stanzaID: "s2", occupantID: "occ1")
        _ = f.act(.xmppMessage(second))
        #expect(f.act(.matrixDelivery(.lookedUp(second, bridged: false))) == [.matrixDelivery(.send(delivery(f, second, setup: false, occupantID: "occ1")))])
        // A replayed copy (archive overlap, reconnect) is in the map: nothing is sent.
        _ = f.act(.xmppMessage(message))
        #expect(f.act(.matrixDelivery(.lookedUp(message, bridged: true))) == [])
    }

    /// Found by scripts/chaos (seed 7): after a restart, archived messages carry an occupant id but no real JID. They
    /// must go out as the ghost already known for that occupant id (by its real JID), not as a second ghost — or a
    /// message the first ghost sent just before a crash is sent again by the second (duplicate), or by a second
    /// ghost that is no longer in the room (lost).
    @Test func anArchivedMessageGoesOutAsTheGhostAlreadyKnownForItsOccupantID() {
        var f = MachineFixture()
        let bob = JID("bob@localhost")!
        let known = f.machine.configuration.ghostUserID(bob.description)!
        let saved = RoomGhost(room: f.room, user: known, nick: "romeo", occupantID: OccupantID("occ1"), realJID: bob, joined: true)
        f.activate(snapshot: f.snapshot(first: true, ghosts: [saved]))   // ghosts as a restart loads them
        let archived = f.groupchat("romeo", "sent while we were down", occupantID: "occ1", archived: true)
        #expect(f.act(.xmppMessage(archived)) == [.matrixDelivery(.lookUpBridged(archived))])
        guard case .matrixDelivery(.send(let sending))? = f.act(.matrixDelivery(.lookedUp(archived, bridged: false))).first else {
            Issue.record("not sent")
            return
        }
        #expect(sending.ghost == known)
        #expect(sending.setup == nil, "the known ghost is joined already: no second ghost is set up")
    }

    @Test func ourOwnReflectionIsAReceiptAndOtherOccupantsCopiesAreIgnored() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let reflection = f.groupchat("Alice", "hi", stanzaID: "s5", originID: "isthmus-1")
        #expect(f.act(.xmppMessage(reflection)) == [.matrixDelivery(.recordReflection(originID: OriginID("isthmus-1"), stanzaID: StanzaID("s5")))])
        let copy = f.groupchat("romeo", "hi", to: f.puppetJID(f.alice))
        #expect(f.act(.xmppMessage(copy)) == [])
        let bridgeOwn = f.groupchat("Matrix", "a notice of ours")
        #expect(f.act(.xmppMessage(bridgeOwn)) == [.matrixDelivery(.recordReflection(originID: nil, stanzaID: StanzaID("s1")))])
    }

    @Test func aRoomWithoutStanzaIDsIsBridgedWithADigestKeyWithoutALookup() {
        var f = MachineFixture()
        f.activate()
        let message = f.groupchat("romeo", "hi", stanzaID: nil)
        guard case .matrixDelivery(.send(let sending))? = f.act(.xmppMessage(message)).first else {
            Issue.record("not sent")
            return
        }
        #expect(sending.key.rawValue.hasPrefix("noid:"))
        #expect(sending.key == PortalStateMachine.digestKey(message, body: "hi"))
    }

    @Test func aStanzaIDIsTrustedOnlyWhereTheRoomAnnouncesStanzaIDs() {
        var f = MachineFixture()
        f.activate(features: RoomFeatures(stanzaIDs: false, archive: false))
        // An occupant could have put this stanza-id there (to suppress a message already mapped under it).
        let forged = f.groupchat("romeo", "hi", stanzaID: "s1", originID: "o1")
        guard case .matrixDelivery(.send(let sending))? = f.act(.xmppMessage(forged)).first else {
            Issue.record("not sent")
            return
        }
        var keyed = forged
        keyed.stanzaID = nil
        #expect(sending.key == PortalStateMachine.digestKey(keyed, body: "hi"))
        #expect(sending.message.stanzaID == nil)

        var trusting = MachineFixture()
        trusting.activate(features: RoomFeatures(stanzaIDs: true, archive: true))
        #expect(trusting.act(.xmppMessage(forged)) == [.matrixDelivery(.lookUpBridged(forged))])
    }

    @Test func aRoomWithoutStanzaIDsKeysMessagesOnTheirSenderAndTheirID() {
        let f = MachineFixture()
        func key(_ nick: String, _ body: String, originID: String? = nil, id: String? = nil, occupantID: String? = nil) -> StanzaID {
            var message = f.groupchat(nick, body, stanzaID: nil, originID: originID, occupantID: occupantID)
            message.id = id.flatMap(StanzaAttributeID.init)
            return PortalStateMachine.digestKey(message, body: body)
        }
        // The same message twice: one key (one Matrix transaction id).
        #expect(key("romeo", "hi", originID: "o1") == key("romeo", "hi", originID: "o1"))
        #expect(key("romeo", "hi", id: "m1") == key("romeo", "hi", id: "m1"))
        // The same text sent twice by the same sender: two messages, two keys.
        #expect(key("romeo", "hi", id: "m1") != key("romeo", "hi", id: "m2"))
        #expect(key("romeo", "hi", originID: "o1") != key("romeo", "hi", originID: "o2"))
        // The same id from two senders: two messages (an occupant cannot suppress another's message by reusing its id).
        #expect(key("romeo", "hi", id: "m1") != key("juliet", "hi", id: "m1"))
        #expect(key("romeo", "hi", id: "m1", occupantID: "a") != key("romeo", "hi", id: "m1", occupantID: "b"))
        // The origin-id wins over the stanza id.
        #expect(key("romeo", "hi", originID: "o1", id: "m1") == key("romeo", "hi", originID: "o1", id: "m2"))
    }

    /// Found by scripts/chaos (seed 11): Synapse stored a message, stopped before answering, and forgot the
    /// transaction id when it came back; the retry would have made a second event.
    @Test func aRetryFindsTheCopyItsEarlierAttemptLeftButNeverAnotherMessagesEvent() {
        let f = MachineFixture()
        let message = f.groupchat("romeo", "hi")
        let sending = delivery(f, message, setup: false)
        func entry(_ id: String, from sender: UserID, _ body: String, msgtype: MessageType = .text) -> MatrixTimelineEntry {
            MatrixTimelineEntry(eventID: EventID(id)!, timestamp: Date(), event: MatrixRoomEvent(
                eventID: EventID(id)!, room: f.room, sender: sender, content: .message(msgtype: msgtype, body: body)))
        }
        let earlier = entry("$earlier", from: sending.ghost, "hi")   // an earlier "hi" of Romeo's, bridged already
        let copy = entry("$copy", from: sending.ghost, "hi")
        let timeline = [earlier, entry("$alice", from: f.alice, "hi"), copy, entry("$other", from: sending.ghost, "bye"),
                        entry("$emote", from: sending.ghost, "hi", msgtype: .emote)]
        #expect(PortalStateMachine.earlierCopy(of: sending, in: timeline, mapped: [EventID("$earlier")!]) == EventID("$copy"))
        // Nothing unmapped with this sender and content: send.
        #expect(PortalStateMachine.earlierCopy(of: sending, in: timeline, mapped: [EventID("$earlier")!, EventID("$copy")!]) == nil)
        #expect(PortalStateMachine.earlierCopy(of: sending, in: [], mapped: []) == nil)
    }

    @Test func anUnavailableHomeserverIsRetriedWithBackoffInOrder() {
        var f = MachineFixture()
        f.activate()
        let message = f.groupchat("romeo", "hi")
        _ = f.act(.xmppMessage(message))
        var sending = delivery(f, message, setup: true)
        #expect(f.act(.matrixDelivery(.lookedUp(message, bridged: false))) == [.matrixDelivery(.send(sending))])
        var pauses: [Duration] = []
        for _ in 0..<7 {
            guard case .matrixDelivery(.retry(let next, let pause))? = f.act(.matrixDelivery(.failed(sending, .unavailable("502")))).first else {
                Issue.record("no retry")
                return
            }
            pauses.append(pause)
            sending = next
        }
        #expect(pauses == [1, 2, 4, 8, 16, 30, 30].map { Duration.seconds($0) })
        #expect(f.act(.matrixDelivery(.delivered(sending, eventIDs: [EventID("$x")!]))).count == 1)
    }

    /// Found by scripts/chaos (seed 2026): a ghost made to leave just before a crash, still joined as the store saw it.
    @Test func aGhostNotInTheRoomJoinsAndSendsOnceMoreThenARefusalIsFinal() {
        var f = MachineFixture()
        f.activate()
        let message = f.groupchat("romeo", "hi")
        _ = f.act(.xmppMessage(message))
        let sending = delivery(f, message, setup: true)
        _ = f.act(.matrixDelivery(.lookedUp(message, bridged: false)))
        #expect(f.act(.matrixDelivery(.delivered(sending, eventIDs: [EventID("$1")!]))).count == 1)   // the ghost is joined now
        let next = f.groupchat("romeo", "again", stanzaID: "s2")
        _ = f.act(.xmppMessage(next))
        let plain = delivery(f, next, setup: false)
        #expect(f.act(.matrixDelivery(.lookedUp(next, bridged: false))) == [.matrixDelivery(.send(plain))])
        var rejoining = delivery(f, next, setup: true)
        rejoining.rejoined = true
        #expect(f.act(.matrixDelivery(.ghostNotInRoom(plain, reason: "M_FORBIDDEN"))) == [.matrixDelivery(.send(rejoining))])
        let failed = MessageMapping(room: f.room, eventID: nil, stanzaID: StanzaID("s2"), originID: nil, direction: .xmppToMatrix,
                                    sender: .occupant(.nick("romeo")), state: .failed)
        #expect(f.act(.matrixDelivery(.ghostNotInRoom(rejoining, reason: "M_FORBIDDEN")))
                == [.matrixDelivery(.recordRefused(failed)), .matrixDelivery(.tellSender(to: f.muc.with(resource: "romeo")!, body: "Your message could not be delivered to Matrix: M_FORBIDDEN"))])
    }

    @Test func aGhostThatJoinedForARefusedMessageIsJoinedInTheModelSoUnlinkTakesItOut() {
        var f = MachineFixture()
        f.activate()
        let message = f.groupchat("romeo", "hi")
        _ = f.act(.xmppMessage(message))
        let sending = delivery(f, message, setup: true)
        _ = f.act(.matrixDelivery(.lookedUp(message, bridged: false)))
        // Joined (its setup made and saved), then refused right away: final, and the model knows it joined.
        #expect(sending.rejoinIsFinal)
        #expect(f.act(.matrixDelivery(.ghostNotInRoom(sending, reason: "M_FORBIDDEN"))).contains { if case .matrixDelivery(.recordRefused) = $0 { true } else { false } })
        #expect(f.machine.ghosts[sending.ghost]?.joined == true)
        let next = f.groupchat("romeo", "again", stanzaID: "s2")
        _ = f.act(.xmppMessage(next))
        let plain = delivery(f, next, setup: false)
        #expect(f.act(.matrixDelivery(.lookedUp(next, bridged: false))) == [.matrixDelivery(.send(plain))])
        // A refusal for good after the setup: the same.
        var f2 = MachineFixture()
        f2.activate()
        _ = f2.act(.xmppMessage(message))
        _ = f2.act(.matrixDelivery(.lookedUp(message, bridged: false)))
        _ = f2.act(.matrixDelivery(.failed(sending, .refused("M_FORBIDDEN"), ghostReady: true)))
        #expect(f2.machine.ghosts[sending.ghost]?.joined == true)
        guard case .unlink(let plan)? = f2.act(.unlink(xmppConnected: true)).last else { Issue.record("no unlink"); return }
        #expect(plan.ghosts == [sending.ghost])
    }

    @Test func aRefusedMessageIsRecordedAndItsSenderToldPrivatelyUnlessItCameFromTheArchive() {
        var f = MachineFixture()
        f.activate()
        let message = f.groupchat("romeo", "hi")
        _ = f.act(.xmppMessage(message))
        let sending = delivery(f, message, setup: true)
        _ = f.act(.matrixDelivery(.lookedUp(message, bridged: false)))
        let failed = MessageMapping(room: f.room, eventID: nil, stanzaID: StanzaID("s1"), originID: nil, direction: .xmppToMatrix,
                                    sender: .occupant(.nick("romeo")), state: .failed)
        #expect(f.act(.matrixDelivery(.failed(sending, .refused("M_FORBIDDEN"))))
                == [.matrixDelivery(.recordRefused(failed)), .matrixDelivery(.tellSender(to: f.muc.with(resource: "romeo")!, body: "Your message could not be delivered to Matrix: M_FORBIDDEN"))])
        var archived = message
        archived.fromArchive = true
        var sendingArchived = sending
        sendingArchived.message = archived
        #expect(f.act(.matrixDelivery(.failed(sendingArchived, .refused("M_FORBIDDEN")))) == [.matrixDelivery(.recordRefused(failed))])
    }

    @Test func occupantsBecomeGhostsThatFollowNickChangesAndLeave() {
        var f = MachineFixture()
        f.activate()
        let romeo = f.ghost(of: "romeo", occupantID: "o1")
        let identity = GhostMachine.identity(muc: f.muc, nick: "romeo", occupantID: OccupantID("o1"), realJID: nil)
        let joined = RoomGhost(room: f.room, user: romeo, nick: "romeo", occupantID: OccupantID("o1"), realJID: nil, joined: true)
        let setup = PortalStateMachine.GhostSetup(ghost: romeo, identity: identity, nick: "romeo", join: true, saved: joined)
        #expect(f.act(.xmppPresence(f.presence("romeo", occupantID: "o1"))) == [.ghosts(.prepare(setup))])
        #expect(f.act(.ghosts(.prepared(setup, error: nil))) == [])
        // Presence updates of a joined occupant cause nothing.
        #expect(f.act(.xmppPresence(f.presence("romeo", occupantID: "o1"))) == [])
        var renamed = joined
        renamed.nick = "Romeo M."
        #expect(f.act(.xmppPresence(f.presence("romeo", available: false, codes: [.nickChanged], newNick: "Romeo M.", occupantID: "o1")))
                == [.ghosts(.rename(renamed))])
        var left = renamed
        left.joined = false
        #expect(f.act(.xmppPresence(f.presence("Romeo M.", available: false, occupantID: "o1"))) == [.ghosts(.remove(romeo, .leave, saving: left))])
    }

    @Test func kickedAndBannedOccupantsAreRemovedByTheBotWithTheReason() {
        var f = MachineFixture()
        f.activate()
        let romeo = f.ghost(of: "romeo")
        _ = f.act(.xmppPresence(f.presence("romeo")))
        #expect(f.act(.xmppPresence(f.presence("romeo", available: false, codes: [.kicked], reason: "spam")))
                == [.ghosts(.remove(romeo, .kick(ban: false, reason: "Kicked in the XMPP room: spam"), saving: nil))])
        _ = f.act(.xmppPresence(f.presence("romeo")))
        #expect(f.act(.xmppPresence(f.presence("romeo", available: false, codes: [.banned])))
                == [.ghosts(.remove(romeo, .kick(ban: true, reason: "Banned in the XMPP room"), saving: nil))])
    }

    @Test func theBridgeRemovedFromTheMUCRejoinsUnlessKickedOrBanned() {
        var f = MachineFixture()
        f.activate()
        #expect(f.act(.xmppPresence(f.presence("Matrix", available: false, codes: [.selfPresence, .kicked], reason: "go away")))
                == [.setStatus(.error, detail: "the bridge was kicked from the XMPP room: go away")])
        #expect(f.act(.matrixEvents([f.text(1)])) == [])
        var g = MachineFixture()
        g.activate()
        #expect(g.act(.xmppPresence(g.presence("Matrix", available: false, codes: [.selfPresence, .serviceShutdown]))) == [.bot(.joinMatrix)])
        // Its own nick change is remembered.
        var h = MachineFixture()
        h.activate()
        #expect(h.act(.xmppPresence(h.presence("Matrix", available: false, codes: [.selfPresence, .nickChanged], newNick: "Bridge"))) == [])
        #expect(h.machine.botNick == "Bridge")
    }

    @Test func aPuppetRemovedByTheRoomRejoinsWithItsNextMessage() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        #expect(f.act(.xmppPresence(f.presence("Alice", available: false, codes: [.kicked]))) == [])
        #expect(f.machine.puppets[f.alice]?.joined == false)
        let queued = f.text(1)
        #expect(f.act(.matrixEvents([queued])) == [.xmppDelivery(.insertMapping(f.mapping(queued), consumingInbox: 1, delivery: f.outgoing(queued)))])
        #expect(f.act(.xmppDelivery(.mappingInserted(f.outgoing(queued), inserted: true)))
                == [.puppets(.join(f.puppetJoin(f.alice, "Alice", then: .send(f.outgoing(queued)))))])
    }
}
