import Bridge
import FoundationEssentials
import IsthmusCommon
import Matrix
import Testing
import XMLStream
import XMPP

/// The MUC the component hosts for a Matrix room, as sequences of inputs and the stanzas and Matrix calls they make:
/// joining (with the Matrix members, history and subject), nick conflicts, several resources of one user, leaving,
/// messages both ways, and kicks and bans from Matrix.
@Suite struct GatewayRoomMachineTests {
    let address = GatewayRoomAddress(JID("#lounge%example.org@bridge.example.org")!, componentDomain: "bridge.example.org")!
    let matrixRoom = RoomID("!lounge:example.org")!
    let alice = UserID("@alice:example.org")!
    let bot = UserID("@isthmus:example.org")!
    let juliet = JID("juliet@capulet.example/balcony")!
    let julietPhone = JID("juliet@capulet.example/phone")!
    let romeo = JID("romeo@montague.example/orchard")!

    func ghost(_ jid: JID) -> UserID { UserID("@_xmpp_\(jid.localpart!):example.org")! }

    func machine() -> GatewayRoomMachine {
        GatewayRoomMachine(address: address, naming: BridgeNaming(componentDomain: "bridge.example.org", botNick: "Matrix")!, bot: bot,
                           ghostOf: { UserID("@_xmpp_\($0.localpart!):example.org") })
    }

    func joinPresence(_ from: JID, nick: String, history: MUCHistoryRequest? = MUCHistoryRequest.none) -> Presence {
        Presence(from: from, to: address.occupant(nick), mucJoin: MUCJoinRequest(history: history))
    }

    func view(history: [GatewayRoomMachine.HistoryMessage] = []) -> GatewayRoomMachine.RoomView {
        .init(room: matrixRoom, members: [alice: "Alice", bot: nil], topic: "Tea at five", history: history)
    }

    /// The stanzas among `actions`, by kind, as (to, from-resource) pairs for presences and bodies for messages.
    func presences(_ actions: [GatewayRoomMachine.Action]) -> [(to: JID?, nick: String?, type: Presence.PresenceType, codes: [MUCStatusCode])] {
        actions.compactMap {
            if case .send(.presence(let presence)) = $0 { (presence.to, presence.from?.resource, presence.type, presence.statusCodes) } else { nil }
        }
    }

    func messages(_ actions: [GatewayRoomMachine.Action]) -> [Message] {
        actions.compactMap { if case .send(.message(let message)) = $0 { message } else { nil } }
    }

    /// Juliet joined (from `juliet`) and the machine that knows it.
    func withJuliet() -> GatewayRoomMachine {
        var room = machine()
        _ = room.handle(.xmppPresence(joinPresence(juliet, nick: "Juliet")))
        _ = room.handle(.joined(user: juliet, view: view()))
        return room
    }

    @Test func aJoinAsksMatrixThenShowsTheMembersItselfLastTheHistoryAndTheSubject() {
        var room = machine()
        let asked = room.handle(.xmppPresence(joinPresence(juliet, nick: "Juliet", history: .maxStanzas(1))))
        #expect(asked == [.joinMatrix(user: juliet.bare, ghost: ghost(juliet), nick: "Juliet")])
        let old = GatewayRoomMachine.HistoryMessage(event: EventID("$old")!, sender: alice, body: "old", sent: Date(timeIntervalSince1970: 1))
        let new = GatewayRoomMachine.HistoryMessage(event: EventID("$new")!, sender: alice, body: "new", sent: Date(timeIntervalSince1970: 2))
        let actions = room.handle(.joined(user: juliet.bare, view: view(history: [old, new])))
        let shown = presences(actions)
        #expect(shown.map(\.nick) == ["Alice", "Juliet"], "the bot is no occupant")
        #expect(shown.last?.codes == [.selfPresence, .roomLogged])
        #expect(shown.allSatisfy { $0.to == juliet })
        let said = messages(actions)
        #expect(said.map(\.body) == ["new", nil], "one history message as asked, then the subject")
        #expect(said.first?.stanzaIDs.first?.id == StanzaID("$new"))
        #expect(said.first?.delay != nil)
        #expect(said.last?.subject == "Tea at five")
        #expect(actions.last == .occupantsChanged)
    }

    @Test func historySinceADateIsWhatCameAfterIt() {
        var room = machine()
        _ = room.handle(.xmppPresence(joinPresence(juliet, nick: "Juliet", history: .since(Date(timeIntervalSince1970: 1.5)))))
        let old = GatewayRoomMachine.HistoryMessage(event: EventID("$old")!, sender: alice, body: "old", sent: Date(timeIntervalSince1970: 1))
        let new = GatewayRoomMachine.HistoryMessage(event: EventID("$new")!, sender: alice, body: "new", sent: Date(timeIntervalSince1970: 2))
        let actions = room.handle(.joined(user: juliet, view: view(history: [old, new])))
        #expect(messages(actions).compactMap(\.body) == ["new"])
    }

    @Test func aRefusedJoinIsAPresenceErrorToEveryResourceThatAsked() {
        var room = machine()
        _ = room.handle(.xmppPresence(joinPresence(juliet, nick: "Juliet")))
        #expect(room.handle(.xmppPresence(joinPresence(julietPhone, nick: "Juliet"))).isEmpty, "waits with the first")
        let actions = room.handle(.joinRefused(user: juliet, StanzaError(type: .auth, condition: .forbidden)))
        #expect(presences(actions).map(\.to) == [juliet, julietPhone])
        #expect(presences(actions).allSatisfy { $0.type == .error })
        #expect(room.isEmpty)
    }

    @Test func aMatrixMembersNickIsRefusedAndTheGhostLeavesAgain() {
        var room = machine()
        _ = room.handle(.xmppPresence(joinPresence(juliet, nick: "alice")))
        let actions = room.handle(.joined(user: juliet, view: view()))
        #expect(presences(actions).map(\.type) == [.error])
        #expect(actions.last == .leaveMatrix(ghost: ghost(juliet), room: matrixRoom))
        #expect(room.isEmpty)
    }

    @Test func anotherXMPPUsersNickIsRefusedAtOnce() {
        var room = withJuliet()
        let actions = room.handle(.xmppPresence(joinPresence(romeo, nick: "JULIET")))
        #expect(presences(actions).map(\.type) == [.error])
        #expect(!actions.contains { if case .joinMatrix = $0 { true } else { false } })
    }

    @Test func aSecondResourceSharesTheOccupantWithoutAskingMatrix() {
        var room = withJuliet()
        let actions = room.handle(.xmppPresence(joinPresence(julietPhone, nick: "Juliet")))
        #expect(presences(actions).map(\.nick) == ["Alice", "Juliet"])
        #expect(presences(actions).allSatisfy { $0.to == julietPhone })
        #expect(!actions.contains { if case .joinMatrix = $0 { true } else { false } })
        #expect(room.occupants[juliet.bare]?.resources == [juliet, julietPhone])
        // With another nick: refused.
        let other = room.handle(.xmppPresence(joinPresence(JID("juliet@capulet.example/tablet")!, nick: "Jules")))
        #expect(presences(other).map(\.type) == [.error])
        // The first resource leaving keeps the occupant; the last one takes the ghost out.
        let first = room.handle(.xmppPresence(Presence(type: .unavailable, from: juliet, to: address.occupant("Juliet"))))
        #expect(presences(first).map(\.to) == [juliet])
        #expect(!first.contains { if case .leaveMatrix = $0 { true } else { false } })
        let last = room.handle(.xmppPresence(Presence(type: .unavailable, from: julietPhone, to: address.occupant("Juliet"))))
        #expect(last.contains(.leaveMatrix(ghost: ghost(juliet), room: matrixRoom)))
        #expect(room.isEmpty)
    }

    @Test func twoXMPPUsersSeeEachOtherOnceAndTheirMessagesAreReflectedToBoth() {
        var room = withJuliet()
        _ = room.handle(.xmppPresence(joinPresence(romeo, nick: "Romeo")))
        // Romeo's ghost joining shows up in a transaction too: it is no Matrix member.
        let echo = MatrixRoomEvent(eventID: EventID("$join")!, room: matrixRoom, sender: ghost(romeo), stateKey: ghost(romeo).rawValue,
                                   content: .member(membership: .join, displayname: "Romeo", reason: nil))
        #expect(room.handle(.matrix(echo)).isEmpty)
        let joined = room.handle(.joined(user: romeo, view: view()))
        #expect(presences(joined).filter { $0.to == juliet }.map(\.nick) == ["Romeo"])
        #expect(presences(joined).filter { $0.to == romeo }.map(\.nick) == ["Alice", "Juliet", "Romeo"])

        let sent = Message(type: .groupchat, from: romeo, to: address.jid, id: StanzaAttributeID("r1"), body: "hi", originID: OriginID("r1"))
        #expect(room.handle(.xmppMessage(sent)) == [.sendMatrix(from: romeo, ghost: ghost(romeo), room: matrixRoom, message: sent,
                                                                outgoing: .text(body: "hi", replyTo: nil))])
        let reflected = messages(room.handle(.sent(from: romeo, message: sent, event: EventID("$hi")!)))
        #expect(reflected.map(\.to).sorted { $0!.description < $1!.description } == [juliet, romeo])
        #expect(reflected.allSatisfy { $0.from == address.occupant("Romeo") && $0.originID == OriginID("r1") && $0.stanzaIDs.first?.id == StanzaID("$hi") })
        // The homeserver's copy of Romeo's message is no second one.
        let copy = MatrixRoomEvent(eventID: EventID("$hi")!, room: matrixRoom, sender: ghost(romeo), content: .message(msgtype: .text, body: "hi"))
        #expect(room.handle(.matrix(copy)).isEmpty)
    }

    @Test func aMatrixMessageGoesToEveryResourceFromTheSendersNick() {
        var room = withJuliet()
        _ = room.handle(.xmppPresence(joinPresence(julietPhone, nick: "Juliet")))
        let event = MatrixRoomEvent(eventID: EventID("$m")!, room: matrixRoom, sender: alice, content: .message(msgtype: .text, body: "hello"))
        let sent = messages(room.handle(.matrix(event)))
        #expect(sent.map(\.to) == [juliet, julietPhone])
        #expect(sent.allSatisfy { $0.from == address.occupant("Alice") && $0.body == "hello" && $0.type == .groupchat })
    }

    @Test func aMessageFromSomeoneNotInIsRefused() {
        var room = withJuliet()
        let stranger = Message(type: .groupchat, from: romeo, to: address.jid, id: StanzaAttributeID("x"), body: "let me in")
        let actions = room.handle(.xmppMessage(stranger))
        #expect(messages(actions).map(\.type) == [.error])
        #expect(messages(actions).first?.error?.condition == .notAcceptable)
    }

    @Test func matrixMembersComingAndGoingAreOccupantPresences() {
        var room = withJuliet()
        let bob = UserID("@bob:example.org")!
        let join = MatrixRoomEvent(eventID: EventID("$b")!, room: matrixRoom, sender: bob, stateKey: bob.rawValue,
                                   content: .member(membership: .join, displayname: "Alice", reason: nil))
        // Two Matrix members called Alice: the second gets an alternative nick.
        #expect(presences(room.handle(.matrix(join))).map(\.nick) == ["Alice (Matrix)"])
        let leave = MatrixRoomEvent(eventID: EventID("$l")!, room: matrixRoom, sender: bob, stateKey: bob.rawValue,
                                    content: .member(membership: .leave, displayname: nil, reason: nil))
        let left = presences(room.handle(.matrix(leave)))
        #expect(left.map(\.nick) == ["Alice (Matrix)"] && left.map(\.type) == [.unavailable])
    }

    @Test func aKickOrBanOnMatrixIs307Or301() {
        for (membership, code) in [(Membership.leave, MUCStatusCode.kicked), (.ban, .banned)] {
            var room = withJuliet()
            let event = MatrixRoomEvent(eventID: EventID("$k")!, room: matrixRoom, sender: alice, stateKey: ghost(juliet).rawValue,
                                        content: .member(membership: membership, displayname: nil, reason: "spam"))
            let actions = room.handle(.matrix(event))
            #expect(presences(actions).map(\.codes) == [[.selfPresence, code]])
            #expect(presences(actions).first?.type == .unavailable)
            #expect(room.isEmpty)
        }
        // Leaving by oneself on Matrix (the ghost's own leave, which our leave causes) is no kick.
        var room = withJuliet()
        let own = MatrixRoomEvent(eventID: EventID("$o")!, room: matrixRoom, sender: ghost(juliet), stateKey: ghost(juliet).rawValue,
                                  content: .member(membership: .leave, displayname: nil, reason: nil))
        #expect(room.handle(.matrix(own)).isEmpty)
    }

    @Test func selfPingsSayWhetherTheAskerIsIn() {
        var room = withJuliet()
        let ping = IQ(type: .get, from: juliet, to: address.occupant("Juliet"), payload: .ping)
        guard case .send(.iq(let answer))? = room.handle(.xmppIQ(ping)).first else { Issue.record("no answer"); return }
        #expect(answer.type == .result)
        let stranger = IQ(type: .get, from: romeo, to: address.occupant("Romeo"), payload: .ping)
        guard case .send(.iq(let refusal))? = room.handle(.xmppIQ(stranger)).first else { Issue.record("no answer"); return }
        #expect(refusal.error?.condition == .notAcceptable)
    }

    @Test func anAddressNamesItsAliasAndBack() {
        #expect(address.alias == RoomAlias("#lounge:example.org"))
        let escaped = GatewayRoomAddress(alias: RoomAlias("#a/b@c:example.org")!, componentDomain: "bridge.example.org")
        #expect(escaped?.jid.description == "#a\\2fb\\40c%example.org@bridge.example.org")
        #expect(escaped?.alias == RoomAlias("#a/b@c:example.org"))
        #expect(GatewayRoomAddress(JID("lounge@bridge.example.org")!, componentDomain: "bridge.example.org") == nil, "no #")
        #expect(GatewayRoomAddress(JID("#lounge@bridge.example.org")!, componentDomain: "bridge.example.org") == nil, "no server")
        #expect(GatewayRoomAddress(JID("#a\\3aexample.org%x@bridge.example.org")!, componentDomain: "bridge.example.org") == nil,
                "a puppet's escaped colon")
        #expect(GatewayRoomAddress(JID("#lounge%example.org@other.example.org")!, componentDomain: "bridge.example.org") == nil)
    }

    // MARK: Rich messages

    func outgoing(_ actions: [GatewayRoomMachine.Action]) -> [GatewayRoomMachine.MatrixOutgoing] {
        actions.compactMap { if case .sendMatrix(_, _, _, _, let outgoing) = $0 { outgoing } else { nil } }
    }

    func groupchat(_ extensions: [XElement], body: String? = nil, id: String) -> Message {
        Message(type: .groupchat, from: juliet, to: address.jid, id: StanzaAttributeID(id), body: body, originID: OriginID(id), extensions: extensions)
    }

    @Test func anOccupantsCorrectionEditsItsEventAndItsRetractionRedactsIt() {
        var room = withJuliet()
        let first = groupchat([], body: "helo", id: "j1")
        _ = room.handle(.xmppMessage(first))
        _ = room.handle(.sent(from: juliet, message: first, event: EventID("$j1")!))
        var correction = MessageReferences()
        correction.replaces = "j1"
        let corrected = room.handle(.xmppMessage(groupchat(correction.elements, body: "hello", id: "j2")))
        #expect(outgoing(corrected) == [.edit(original: EventID("$j1")!, body: "hello")])
        var retraction = MessageReferences()
        retraction.retractions = [.legacy(originID: "j1")]
        let retracted = room.handle(.xmppMessage(groupchat(retraction.elements, id: "j3")))
        #expect(outgoing(retracted) == [.redaction(EventID("$j1")!)])
        #expect(messages(retracted).map(\.to) == [juliet], "reflected")
    }

    @Test func aReplyNamesTheEventAndLosesItsQuote() {
        var room = withJuliet()
        var reply = MessageReferences()
        reply.reply = .init(to: nil, id: "$m")
        reply.fallbacks = [.init(feature: XMPPNamespace.reply, ranges: [0..<8])]
        let actions = room.handle(.xmppMessage(groupchat(reply.elements, body: "> hello\nyes", id: "r1")))
        #expect(outgoing(actions) == [.text(body: "yes", replyTo: EventID("$m")!)])
    }

    @Test func anOccupantsReactionsAreAddedAndTakenBackOneKeyAtATime() {
        var room = withJuliet()
        var first = MessageReferences()
        first.reactions = .init(id: "$m", keys: ["👍", "🎉"])
        let added = room.handle(.xmppMessage(groupchat(first.elements, id: "x1")))
        #expect(Set(outgoing(added)) == [.reaction(target: EventID("$m")!, key: "👍"), .reaction(target: EventID("$m")!, key: "🎉")])
        _ = room.handle(.reacted(from: juliet, target: EventID("$m")!, key: "👍", event: EventID("$r1")!))
        _ = room.handle(.reacted(from: juliet, target: EventID("$m")!, key: "🎉", event: EventID("$r2")!))
        var second = MessageReferences()
        second.reactions = .init(id: "$m", keys: ["🎉"])
        #expect(outgoing(room.handle(.xmppMessage(groupchat(second.elements, id: "x2")))) == [.redaction(EventID("$r1")!)])
    }

    @Test func matrixEditsRepliesReactionsAndRedactionsReachXMPPByEventID() {
        var room = withJuliet()
        let edit = MatrixRoomEvent(eventID: EventID("$e")!, room: matrixRoom, sender: alice,
                                   content: .message(msgtype: .text, body: "fixed", details: MessageDetails(replaces: EventID("$m")!)))
        let corrected = messages(room.handle(.matrix(edit)))
        #expect(corrected.first?.references.replaces == "$m" && corrected.first?.body == "fixed")
        let reply = MatrixRoomEvent(eventID: EventID("$r")!, room: matrixRoom, sender: alice,
                                    content: .message(msgtype: .text, body: "sure", details: MessageDetails(replyTo: EventID("$m")!)))
        #expect(messages(room.handle(.matrix(reply))).first?.references.reply?.id == "$m")
        let react = MatrixRoomEvent(eventID: EventID("$x")!, room: matrixRoom, sender: alice, content: .reaction(target: EventID("$m")!, key: "👍"))
        #expect(messages(room.handle(.matrix(react))).first?.references.reactions == .init(id: "$m", keys: ["👍"]))
        let unreact = MatrixRoomEvent(eventID: EventID("$u")!, room: matrixRoom, sender: alice, content: .redaction(target: EventID("$x")!, reason: nil))
        #expect(messages(room.handle(.matrix(unreact))).first?.references.reactions == .init(id: "$m", keys: []), "the set is empty now")
        let redact = MatrixRoomEvent(eventID: EventID("$d")!, room: matrixRoom, sender: alice, content: .redaction(target: EventID("$m")!, reason: nil))
        #expect(messages(room.handle(.matrix(redact))).first?.references.retraction == .current(id: "$m"))
        #expect(messages(room.handle(.matrix(edit))).first?.id == StanzaAttributeID("$e"), "the event id is the message's id too")
    }

    // MARK: Typing and markers

    @Test func chatStatesAreTheGhostsTypingAndABodyEndsItOnlyWhenTyping() {
        var room = withJuliet()
        func typing(_ actions: [GatewayRoomMachine.Action]) -> [Bool] {
            actions.compactMap { if case .typing(_, _, let on) = $0 { on } else { nil } }
        }
        let composing = Message(type: .groupchat, from: juliet, to: address.jid, extensions: ChatSignals(chatState: .composing).elements)
        #expect(typing(room.handle(.xmppMessage(composing))) == [true])
        let text = Message(type: .groupchat, from: juliet, to: address.jid, id: StanzaAttributeID("t1"), body: "done")
        #expect(typing(room.handle(.xmppMessage(text))) == [false], "the message ends the typing")
        #expect(typing(room.handle(.xmppMessage(text))).isEmpty, "no typing notice for a message when not typing")
        let marker = Message(type: .groupchat, from: juliet, to: address.jid, extensions: ChatSignals(displayed: "$m").elements)
        #expect(room.handle(.xmppMessage(marker)).contains(.readReceipt(ghost: ghost(juliet), room: matrixRoom, event: EventID("$m")!)))
    }

    @Test func matrixTypingAndReceiptsAreChatStatesAndMarkersFromTheNick() {
        var room = withJuliet()
        let started = messages(room.handle(.matrixEphemeral(.typing([alice, ghost(juliet)]))))
        #expect(started.map(\.signals.chatState) == [.composing], "our own ghost's typing is not echoed")
        #expect(started.first?.from == address.occupant("Alice"))
        #expect(messages(room.handle(.matrixEphemeral(.typing([alice])))).isEmpty, "no change")
        #expect(messages(room.handle(.matrixEphemeral(.typing([])))).map(\.signals.chatState) == [.active])
        let read = messages(room.handle(.matrixEphemeral(.read([alice: EventID("$x")!, ghost(juliet): EventID("$y")!]))))
        #expect(read.map(\.signals.displayed) == ["$x"])
    }

    // MARK: Private messages

    @Test func privateMessagesGoToTheOccupantOrTheMatrixMember() {
        var room = withJuliet()
        _ = room.handle(.xmppPresence(joinPresence(romeo, nick: "Romeo")))
        _ = room.handle(.joined(user: romeo, view: view()))
        let toRomeo = Message(type: .chat, from: juliet, to: address.occupant("Romeo"), id: StanzaAttributeID("p1"), body: "psst")
        let passed = messages(room.handle(.xmppMessage(toRomeo)))
        #expect(passed.map(\.to) == [romeo] && passed.first?.from == address.occupant("Juliet") && passed.first?.type == .chat)
        let toAlice = Message(type: .chat, from: juliet, to: address.occupant("Alice"), id: StanzaAttributeID("p2"), body: "hi")
        #expect(room.handle(.xmppMessage(toAlice)) == [.sendDirect(from: juliet, ghost: ghost(juliet), to: alice, message: toAlice)])
        let toNobody = Message(type: .chat, from: juliet, to: address.occupant("Nobody"), id: StanzaAttributeID("p3"), body: "?")
        #expect(messages(room.handle(.xmppMessage(toNobody))).first?.error?.condition == .itemNotFound)
        let answer = messages(room.handle(.matrixPrivate(from: alice, to: ghost(juliet), body: "hello", event: EventID("$a")!)))
        #expect(answer.map(\.to) == [juliet] && answer.first?.from == address.occupant("Alice") && answer.first?.type == .chat)
    }

    // MARK: What the review found

    @Test func aBouncedResourceLeavesWith333AndNoSelfPresence() {
        var room = withJuliet()
        _ = room.handle(.xmppPresence(joinPresence(romeo, nick: "Romeo")))
        _ = room.handle(.joined(user: romeo, view: view()))
        let bounce = Message(type: .error, from: romeo, to: address.occupant("Romeo"), error: StanzaError(type: .cancel, condition: .serviceUnavailable))
        let actions = room.handle(.xmppMessage(bounce))
        #expect(presences(actions).map(\.to) == [juliet], "only the others are told")
        #expect(presences(actions).first?.codes == [.removedAfterError])
        #expect(actions.contains(.leaveMatrix(ghost: ghost(romeo), room: matrixRoom)))
    }

    @Test func aMemberComingOrRenamingNeverRenamesAnother() {
        var room = withJuliet()
        let carol = UserID("@carol:example.org")!
        func member(_ user: UserID, _ name: String?, _ membership: Membership = .join) -> MatrixRoomEvent {
            MatrixRoomEvent(eventID: EventID("$\(user.localpart)\(name ?? "-")")!, room: matrixRoom, sender: user, stateKey: user.rawValue,
                            content: .member(membership: membership, displayname: name, reason: nil))
        }
        // Carol takes "Alice" as her name: she gets the alternative.
        #expect(presences(room.handle(.matrix(member(carol, "Alice")))).map(\.nick) == ["Alice (Matrix)"])
        #expect(room.memberNicks()[alice] == "Alice", "Alice keeps her nick")
        // Alice leaves: Carol keeps hers (no silent rename).
        _ = room.handle(.matrix(member(alice, nil, .leave)))
        #expect(room.memberNicks()[carol] == "Alice (Matrix)")
    }

    @Test func nobodyRetractsOrCorrectsAnothersMessage() {
        var room = withJuliet()
        var retraction = MessageReferences()
        retraction.retractions = [.current(id: "$someone-elses")]
        #expect(outgoing(room.handle(.xmppMessage(groupchat(retraction.elements, id: "r1")))).isEmpty)
        var correction = MessageReferences()
        correction.replaces = "$someone-elses"
        #expect(outgoing(room.handle(.xmppMessage(groupchat(correction.elements, body: "mine now", id: "c1"))))
                == [.text(body: "mine now", replyTo: nil)], "an unknown original: the text as a new message")
        // Its own message, by the stanza-id the room gave it: retracted.
        let own = groupchat([], body: "oops", id: "o1")
        _ = room.handle(.xmppMessage(own))
        _ = room.handle(.sent(from: juliet, message: own, event: EventID("$own")!))
        var byStanzaID = MessageReferences()
        byStanzaID.retractions = [.current(id: "$own")]
        #expect(outgoing(room.handle(.xmppMessage(groupchat(byStanzaID.elements, id: "r2")))) == [.redaction(EventID("$own")!)])
    }

    @Test func aSecondResourceGetsTheHistoryItAsksFor() {
        var room = withJuliet()
        let asked = room.handle(.xmppPresence(joinPresence(julietPhone, nick: "Juliet", history: .maxStanzas(1))))
        #expect(asked.first == .readHistory(resource: julietPhone, ghost: ghost(juliet), room: matrixRoom, wanted: .last(1)))
        let old = GatewayRoomMachine.HistoryMessage(event: EventID("$old")!, sender: alice, body: "old", sent: Date(timeIntervalSince1970: 1))
        let new = GatewayRoomMachine.HistoryMessage(event: EventID("$new")!, sender: alice, body: "new", sent: Date(timeIntervalSince1970: 2))
        let welcomed = room.handle(.historyRead(resource: julietPhone, history: [old, new], wanted: .last(1)))
        #expect(messages(welcomed).map(\.body) == ["new", nil], "the last message, then the subject")
        #expect(welcomed.allSatisfy { if case .send(let stanza) = $0 { stanza.to == julietPhone } else { false } })
    }

    @Test func encryptedMessagesAreNeverSilentlyDropped() {
        var room = withJuliet()
        let encrypted = MatrixRoomEvent(eventID: EventID("$e1")!, room: matrixRoom, sender: alice, content: .encrypted)
        let told = messages(room.handle(.matrix(encrypted)))
        #expect(told.count == 1 && told.first?.from == address.jid && told.first?.body?.contains("encrypted") == true)
        #expect(room.handle(.matrix(encrypted)).isEmpty, "once")
    }
}
