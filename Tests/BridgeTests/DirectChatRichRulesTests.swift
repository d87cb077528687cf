@testable import Bridge
import IsthmusCommon
import IsthmusStore
import Testing
import XMPP

/// Corrections, reactions and retractions inside a DM, both ways: which private message each names (the `id` it
/// went with; a private message has no stanza-id) and who may refer to what.
@Suite struct DirectChatRichRulesTests {
    let linked = RoomID("!linked:localhost")!
    let dm = RoomID("!dm:localhost")!
    let alice = UserID("@alice:localhost")!
    let ghost = UserID("@_xmpp_romeo:localhost")!
    let muc = JID("lounge@conference.localhost")!
    let romeoJID = JID("romeo@localhost")!
    let alicesEvent = EventID("$alice1")!
    let romeosEvent = EventID("$romeo1")!

    var chat: DirectChat {
        DirectChat(linkedRoom: linked, identity: "romeo@localhost", matrixUser: alice, muc: muc, ghost: ghost, matrixRoom: dm)
    }
    var romeo: RoomGhost { RoomGhost(room: linked, user: ghost, nick: "Romeo", occupantID: nil, realJID: romeoJID, joined: true) }

    /// alice's private message (ours: its `id` is its origin-id) and Romeo's (his `id` "pm1").
    var alicesMessage: MessageMapping {
        MessageMapping(room: dm, eventID: alicesEvent, stanzaID: nil, originID: OriginID("isthmus-pm-a1"), direction: .matrixToXMPP,
                       sender: .matrix(alice), state: .delivered, xmppID: StanzaAttributeID("isthmus-pm-a1"))
    }
    var romeosMessage: MessageMapping {
        MessageMapping(room: dm, eventID: romeosEvent, stanzaID: nil, originID: nil, direction: .xmppToMatrix,
                       sender: .occupant(.realJID(romeoJID)), state: .delivered, xmppID: StanzaAttributeID("pm1"), nick: "Romeo")
    }

    func event(_ id: String, _ content: MatrixRoomEvent.Content, from sender: UserID? = nil) -> MatrixRoomEvent {
        MatrixRoomEvent(eventID: EventID(id)!, room: dm, sender: sender ?? alice, content: content)
    }

    func step(_ event: MatrixRoomEvent, _ targets: PortalStateMachine.MatrixTargets) -> DirectChatRules.MatrixStep {
        DirectChatRules.step(for: event, chat: chat, occupant: romeo, targets: targets)
    }

    func sent(_ stanza: OutgoingGroupchat, kind: MessageMapping.Kind, target: EventID, reaction: ReactionChange? = nil) -> DirectChatRules.MatrixStep {
        .sendPrivate(to: muc.with(resource: "Romeo")!, .init(stanza: stanza, kind: kind, target: target, reaction: reaction))
    }

    @Test func aliceCorrectsOnlyHerOwnMessageNamingTheIDItWentWith() {
        let edit = event("$e2", .message(msgtype: .text, body: "* fixed", details: MessageDetails(replaces: alicesEvent)))
        #expect(step(edit, .init(original: alicesMessage))
                == sent(OutgoingGroupchat(body: "* fixed", references: MessageReferences(replaces: "isthmus-pm-a1")), kind: .edit, target: alicesEvent))
        // Romeo's message, or one the bridge never sent: nothing goes.
        #expect(step(edit, .init(original: romeosMessage)) == .ignore)
        #expect(step(edit, .init()) == .ignore)
    }

    @Test func aliceReactsWithHerWholeSetAndARedactedReactionLeavesTheRest() {
        let earlier = Reaction(room: dm, target: romeosEvent, reactor: .matrix(alice), key: "🎉", eventID: EventID("$r0")!)
        let thumbs = event("$r1", .reaction(target: romeosEvent, key: "👍"))
        let added = Reaction(room: dm, target: romeosEvent, reactor: .matrix(alice), key: "👍", eventID: EventID("$r1")!)
        #expect(step(thumbs, .init(reacted: romeosMessage, reactions: [earlier]))
                == sent(.reactions(to: "pm1", ["🎉", "👍"]), kind: .reaction, target: romeosEvent, reaction: ReactionChange(added: [added])))
        // The same key again adds nothing; her own message is named by its origin-id.
        #expect(step(thumbs, .init(reacted: romeosMessage, reactions: [added])) == .ignore)
        let onHers = event("$r2", .reaction(target: alicesEvent, key: "👍"))
        #expect(step(onHers, .init(reacted: alicesMessage)) == sent(
            .reactions(to: "isthmus-pm-a1", ["👍"]), kind: .reaction, target: alicesEvent,
            reaction: ReactionChange(added: [Reaction(room: dm, target: alicesEvent, reactor: .matrix(alice), key: "👍", eventID: EventID("$r2")!)])))
        // Redacting 🎉: the set without it.
        let undo = event("$u1", .redaction(target: EventID("$r0")!, reason: nil))
        #expect(step(undo, .init(reacted: romeosMessage, reactions: [earlier, added], redactedReaction: earlier))
                == sent(.reactions(to: "pm1", ["👍"]), kind: .reaction, target: romeosEvent, reaction: ReactionChange(removed: [earlier])))
    }

    @Test func aliceRetractsOnlyHerOwnMessage() {
        let redaction = event("$d1", .redaction(target: alicesEvent, reason: nil))
        #expect(step(redaction, .init(redacted: alicesMessage))
                == sent(.retraction(id: "isthmus-pm-a1", originID: OriginID("isthmus-pm-a1")!), kind: .retraction, target: alicesEvent))
        // Romeo's message cannot be removed for him (she is told); a redaction by someone else is not alice's.
        #expect(step(event("$d2", .redaction(target: romeosEvent, reason: nil)), .init(redacted: romeosMessage))
                == .notice(DirectChatRules.notRetractedNotice))
        #expect(step(event("$d3", .redaction(target: alicesEvent, reason: nil), from: UserID("@mallory:localhost")!),
                     .init(redacted: alicesMessage)) == .ignore)
    }

    @Test func aliceRepliesNamingTheRepliedMessagesIDWithAQuoteOfNickAndText() {
        var romeos = romeosMessage
        romeos.excerpt = "want tea?"
        let reply = event("$q1", .message(msgtype: .text, body: "yes", details: MessageDetails(replyTo: romeosEvent)))
        let quote = "> Romeo:\n> want tea?\n"
        var references = MessageReferences(reply: .init(to: muc.with(resource: "Romeo"), id: "pm1"))
        references.fallbacks = [.init(feature: XMPPNamespace.reply, ranges: [0..<quote.unicodeScalars.count])]
        #expect(step(reply, .init(reply: romeos)) == .sendPrivate(to: muc.with(resource: "Romeo")!, .init(
            stanza: OutgoingGroupchat(body: quote + "yes", references: references), excerpt: "yes")))
        // To her own message: her occupant's nick, and her message's id.
        var hers = alicesMessage
        hers.excerpt = "tea?"
        let own = DirectChatRules.step(for: reply, chat: chat, occupant: romeo, targets: .init(reply: hers), userNick: "Alice")
        guard case .sendPrivate(_, let send) = own else {
            Issue.record("not sent: \(own)")
            return
        }
        #expect(send.stanza.references.reply == .init(to: muc.with(resource: "Alice"), id: "isthmus-pm-a1"))
        #expect(send.stanza.body == "> Alice:\n> tea?\nyes")
        // Replying to nothing the bridge sent: plain text.
        #expect(step(reply, .init()) == .sendPrivate(to: muc.with(resource: "Romeo")!, .init(stanza: OutgoingGroupchat(body: "yes"), excerpt: "yes")))
    }

    // MARK: XMPP → Matrix

    func inbound(_ body: String?, id: String = "pm2", _ references: MessageReferences) -> DirectChatRules.Inbound {
        var message = RoomMessage(room: muc, nick: "Romeo", to: JID("alice@bridge.localhost"), id: StanzaAttributeID(id), realJID: romeoJID, body: body)
        message.references = references
        return DirectChatRules.Inbound(user: alice, ghost: ghost, identity: "romeo@localhost", message: message)
    }

    func plan(_ inbound: DirectChatRules.Inbound, _ targets: PortalStateMachine.XMPPTargets) -> DirectChatRules.InboundPlan {
        DirectChatRules.plan(inbound, in: dm, targets: targets) { ClientTransactionID("t" + ($0 ?? ""))! }
    }

    var record: MessageMapping {
        MessageMapping(room: dm, eventID: nil, stanzaID: nil, originID: nil, direction: .xmppToMatrix, sender: .occupant(.realJID(romeoJID)),
                       state: .delivered, xmppID: StanzaAttributeID("pm2"), nick: "Romeo")
    }

    @Test func romeosCorrectionEditsHisMessageAndIsMappedToIt() {
        var edit = record
        edit.kind = .edit
        edit.target = romeosEvent
        edit.excerpt = "fixed"
        #expect(plan(inbound("fixed", MessageReferences(replaces: "pm1")), .init(original: romeosMessage))
                == .send([.message(OutgoingMatrixMessage(kind: .text, body: "fixed").replacing(romeosEvent), txnID: ClientTransactionID("t")!)], edit))
        // A correction naming nothing he sent goes as a plain message (as in rooms).
        var plain = record
        plain.excerpt = "fixed"
        #expect(plan(inbound("fixed", MessageReferences(replaces: "nope")), .init())
                == .send([.message(OutgoingMatrixMessage(kind: .text, body: "fixed"), txnID: ClientTransactionID("t")!)], plain))
    }

    @Test func romeosReplyToAlicesMessageIsAMatrixReplyWithoutTheQuote() {
        var references = MessageReferences(reply: .init(to: muc.with(resource: "alice"), id: "isthmus-pm-a1"))
        references.fallbacks = [.init(feature: XMPPNamespace.reply, ranges: [0..<10])]
        var reply = record
        reply.excerpt = "yes"
        var outgoing = OutgoingMatrixMessage(kind: .text, body: "yes")
        outgoing.relatesTo = .reply(to: alicesEvent)
        #expect(plan(inbound("> alice: hyes", references), .init(reply: alicesMessage))
                == .send([.message(outgoing, txnID: ClientTransactionID("t")!)], reply))
        // Replying to something the bridge never saw: the text as it came, quote included (styled as a quote).
        var plain = record
        plain.excerpt = "> alice: hyes"
        #expect(plan(inbound("> alice: hyes", references), .init())
                == .send([.message(RichTranslation.toMatrix("> alice: hyes", unstyled: false, nicks: [:]), txnID: ClientTransactionID("t")!)], plain))
    }

    @Test func romeosReactionSetIsDiffedAndHisRetractionRedactsOnlyHisOwn() {
        let party = Reaction(room: dm, target: alicesEvent, reactor: .occupant(.realJID(romeoJID)), key: "🎉", eventID: EventID("$p")!)
        var reactionRecord = record
        reactionRecord.kind = .reaction
        reactionRecord.target = alicesEvent
        let set = MessageReferences(reactions: .init(id: "isthmus-pm-a1", keys: ["👍"]))
        #expect(plan(inbound(nil, set), .init(reacted: alicesMessage, reactions: [party])) == .send(
            [.reaction(target: alicesEvent, key: "👍", txnID: ClientTransactionID("t+👍")!),
             .redaction(EventID("$p")!, reason: nil, txnID: ClientTransactionID("t-🎉")!)],
            reactionRecord,
            reactions: ReactionChange(added: [Reaction(room: dm, target: alicesEvent, reactor: .occupant(.realJID(romeoJID)), key: "👍", eventID: nil)],
                                      removed: [party])))
        #expect(plan(inbound(nil, set), .init()) == .ignore("reactions to a message that was not bridged"))

        let retract = MessageReferences(retractions: [.current(id: "pm1")])
        var retraction = record
        retraction.kind = .retraction
        retraction.target = romeosEvent
        #expect(plan(inbound(nil, retract), .init(retracted: romeosMessage))
                == .send([.redaction(romeosEvent, reason: nil, txnID: ClientTransactionID("t")!)], retraction))
        // alice's message is not his to retract.
        #expect(plan(inbound(nil, retract), .init(retracted: alicesMessage))
                == .ignore("retraction of a message that is not the sender's bridged message"))
    }
}
