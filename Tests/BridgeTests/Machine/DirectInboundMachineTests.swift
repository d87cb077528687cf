@testable import Bridge
import IsthmusCommon
import IsthmusStore
import Testing

/// XMPP → Matrix in DMs, one private message at a time: which DM room it goes to (the stored one while the user is
/// in it, else a new one recorded before and after it is made; none for a body-less message with no DM), then the
/// sends and the mapping.
struct DirectInboundMachineTests {
    typealias Machine = DirectInboundMachine

    let linked = RoomID("!linked:localhost")!
    let dm = RoomID("!dm:localhost")!
    let newDM = RoomID("!dm2:localhost")!
    let alice = UserID("@alice:localhost")!
    let ghost = UserID("@_xmpp_romeo:localhost")!
    let muc = JID("lounge@conference.localhost")!
    let naming = BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!

    func machine(_ body: String?, id: String? = "pm1", references: MessageReferences = MessageReferences()) -> Machine {
        var message = RoomMessage(room: muc, nick: "Romeo", to: JID("alice@bridge.localhost"), id: id.flatMap(StanzaAttributeID.init),
                                  realJID: JID("romeo@localhost"), body: body)
        message.references = references
        return Machine(DirectChatRules.Inbound(user: alice, ghost: ghost, identity: "romeo@localhost", message: message),
                       linkedRoom: linked, muc: muc, naming: naming, fallbackKey: "random")
    }

    func chat(_ room: RoomID?) -> DirectChat {
        DirectChat(linkedRoom: linked, identity: "romeo@localhost", matrixUser: alice, muc: muc, ghost: ghost, matrixRoom: room)
    }

    /// The actions without log lines.
    func act(_ m: inout Machine, _ input: Machine.Input) -> [Machine.Action] {
        m.receive(input).filter { if case .log = $0 { false } else { true } }
    }

    /// What a plain text goes out as in `room`.
    func sendsOfText(_ m: Machine, in room: RoomID) -> [PortalStateMachine.MatrixSend] {
        guard case .send(let sends, _, _) = DirectChatRules.plan(m.inbound, in: room, targets: .init(), txnID: { part in
            naming.privateTxnID(muc: muc, identity: "romeo@localhost", stanzaID: part.map { "pm1\u{0}" + $0 } ?? "pm1")
        }) else { return [] }
        return sends
    }

    @Test func theFirstMessageOpensTheDMRecordedBeforeAndAfterThenSendsAndMaps() {
        var m = machine("hi")
        #expect(act(&m, .start(nil)) == [.save(chat(nil)), .createRoom(chat(nil))])
        #expect(act(&m, .roomCreated(dm)) == [.save(chat(dm)), .readTargets(dm)])
        let sends = sendsOfText(m, in: dm)
        #expect(!sends.isEmpty)
        #expect(act(&m, .targetsRead(.init())) == [.send(sends, in: dm)])
        let sent = act(&m, .sent([EventID("$m1")!]))
        guard case .record(let mapping, _)? = sent.first, sent.count == 1 else { Issue.record("expected one record, got \(sent)"); return }
        #expect(mapping.room == dm && mapping.eventID == EventID("$m1") && mapping.direction == .xmppToMatrix)
        #expect(mapping.xmppID == StanzaAttributeID("pm1"))
    }

    @Test func aStoredDMIsUsedWhileTheUserIsInItElseANewOneIsOpened() {
        var joined = machine("hi")
        #expect(act(&joined, .start(chat(dm))) == [.readMembership(dm)])
        #expect(act(&joined, .membershipRead(.join)) == [.readTargets(dm)])
        var invited = machine("hi")
        _ = act(&invited, .start(chat(dm)))
        #expect(act(&invited, .membershipRead(.invite)) == [.readTargets(dm)])
        for gone in [Membership.leave, nil] {
            var left = machine("hi")
            _ = act(&left, .start(chat(dm)))
            #expect(act(&left, .membershipRead(gone)) == [.leave(dm), .save(chat(nil)), .createRoom(chat(nil))])
            #expect(act(&left, .roomCreated(newDM)) == [.save(chat(newDM)), .readTargets(newDM)])
        }
    }

    @Test func aBodyLessMessageGoesToTheDMThereIsAndOpensNone() {
        var noDM = machine(nil)
        let ignored = noDM.receive(.start(nil))
        guard case .log(let entry)? = ignored.first, ignored.count == 1 else { Issue.record("expected one log line, got \(ignored)"); return }
        #expect(entry.level == .debug)
        // With a DM it asks nobody's membership: a reaction or retraction refers to what is there.
        var withDM = machine(nil)
        #expect(act(&withDM, .start(chat(dm))) == [.readTargets(dm)])
    }

    @Test func aMessageThatPlansNothingEndsWithALogLine() {
        var references = MessageReferences()
        references.reactions = MessageReferences.Reactions(id: "never-bridged", keys: ["👍"])
        var m = machine(nil, references: references)
        #expect(act(&m, .start(chat(dm))) == [.readTargets(dm)])
        let actions = m.receive(.targetsRead(.init()))
        #expect(!actions.isEmpty && actions.allSatisfy { if case .log = $0 { true } else { false } })
    }

    @Test func aGhostNotInTheDMJoinsAndSendsOnceMore() {
        var m = machine("hi")
        _ = act(&m, .start(chat(dm)))
        _ = act(&m, .membershipRead(.join))
        let sends = sendsOfText(m, in: dm)
        #expect(act(&m, .targetsRead(.init())) == [.send(sends, in: dm)])
        #expect(act(&m, .notInRoom(reason: "M_FORBIDDEN")) == [.join(dm), .send(sends, in: dm)])
        let again = m.receive(.notInRoom(reason: "M_FORBIDDEN"))
        guard case .log(let entry)? = again.first, again.count == 1 else { Issue.record("expected one log line, got \(again)"); return }
        #expect(entry.level == .error)
    }

    @Test func withNoStanzaIDTheFallbackKeyMakesTheTransactionIDs() {
        #expect(machine("hi", id: nil).key == "random")
        #expect(machine("hi", id: "pm7").key == "pm7")
    }
}
