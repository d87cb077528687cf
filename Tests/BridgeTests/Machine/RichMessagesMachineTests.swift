@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing

/// Replies, corrections, retractions, moderation and reactions through the portal machine, both ways (RICH.md A, 2–5):
/// which mapped message each refers to is handed in (as the store lookups would), and the Matrix sends or the XMPP
/// stanza that come out are compared literally.
@Suite struct RichMessagesMachineTests {
    typealias Delivery = PortalStateMachine.MatrixDelivery
    typealias Targets = PortalStateMachine.XMPPTargets

    // MARK: Values

    let romeo = MessageSender.occupant(.occupantID(OccupantID("occ-romeo")!))
    let juliet = MessageSender.occupant(.occupantID(OccupantID("occ-juliet")!))

    /// A groupchat message from `nick` (occupant-id `occ-<nick>`) with `references`.
    func message(_ f: MachineFixture, _ nick: String, _ body: String?, stanzaID: String, id: String? = nil,
                 references: MessageReferences) -> RoomMessage {
        var message = f.groupchat(nick, body ?? "", stanzaID: stanzaID, occupantID: nick.isEmpty ? nil : "occ-\(nick)")
        message.body = body
        message.id = id.flatMap(StanzaAttributeID.init)
        message.references = references
        return message
    }

    /// romeo's XMPP message, bridged as `$r1` (stanza-id `S1`, id attribute `m1`).
    func romeosMessage(_ f: MachineFixture) -> MessageMapping {
        MessageMapping(room: f.room, eventID: EventID("$r1"), stanzaID: StanzaID("S1"), originID: OriginID("o-m1"),
                       direction: .xmppToMatrix, sender: romeo, state: .delivered, xmppID: StanzaAttributeID("m1"),
                       nick: "romeo", excerpt: "hello")
    }

    /// Alice's Matrix message `$a1`, delivered to the MUC (stanza-id `S0`).
    func alicesMessage(_ f: MachineFixture) -> MessageMapping {
        let originID = f.naming.originID(for: EventID("$a1")!)
        return MessageMapping(room: f.room, eventID: EventID("$a1"), stanzaID: StanzaID("S0"), originID: originID,
                              direction: .matrixToXMPP, sender: .matrix(f.alice), state: .delivered,
                              xmppID: StanzaAttributeID(originID.rawValue), nick: "Alice", excerpt: "hello")
    }

    func txnID(_ f: MachineFixture, _ key: String, _ part: String? = nil) -> ClientTransactionID {
        f.naming.matrixTxnID(room: f.muc, stanzaID: StanzaID(part.map { key + "\u{0}" + $0 } ?? key)!)
    }

    /// The one delivery in `actions`.
    func sent(_ actions: [MachineFixture.Action]) throws -> Delivery {
        guard actions.count == 1, case .matrixDelivery(.send(let delivery)) = actions[0] else {
            throw Failure("expected one sendToMatrix, got \(actions)")
        }
        return delivery
    }

    /// The one mapping (with its delivery) in `actions`.
    func mapped(_ actions: [MachineFixture.Action])
        throws -> (mapping: MessageMapping, seq: Int64, delivery: PortalStateMachine.XMPPDelivery, reaction: ReactionChange?) {
        guard actions.count == 1, case .xmppDelivery(.insertMapping(let mapping, let seq, let delivery, let reaction)) = actions[0] else {
            throw Failure("expected one insertMapping, got \(actions)")
        }
        return (mapping, seq, delivery, reaction)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The message looked up and delivered with `targets`.
    func deliver(_ f: inout MachineFixture, _ message: RoomMessage, _ targets: Targets) -> [MachineFixture.Action] {
        #expect(f.act(.xmppMessage(message)) == [.matrixDelivery(.lookUpBridged(message))])
        return f.act(.matrixDelivery(.lookedUp(message, bridged: false, targets: targets)))
    }

    // MARK: XMPP → Matrix: replies

    @Test func aResolvedReplyDropsTheQuoteAndRelatesToTheTarget() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let quote = "> Alice:\n> hello 😀\n"   // 19 Unicode scalars (the emoji is one)
        let reply = message(f, "romeo", quote + "thanks", stanzaID: "S2", references: MessageReferences(
            reply: .init(to: f.muc.with(resource: "Alice"), id: "S0"),
            fallbacks: [.init(feature: "urn:xmpp:reply:0", ranges: [0..<quote.unicodeScalars.count])]))
        let delivery = try sent(deliver(&f, reply, Targets(reply: alicesMessage(f))))
        #expect(delivery.ghost == f.ghost(of: "romeo", occupantID: "occ-romeo"))
        // The target's Matrix sender is mentioned, as mautrix does (RICH.md §2).
        #expect(delivery.sends == [.message(OutgoingMatrixMessage(kind: .text, body: "thanks", relatesTo: .reply(to: EventID("$a1")!),
                                                                  mentions: [f.alice]),
                                            txnID: txnID(f, "S2"))])
        #expect(delivery.record.kind == .message)
        #expect(delivery.record.excerpt == "thanks")
        #expect(delivery.record.nick == "romeo")
        #expect(delivery.record.stanzaID == StanzaID("S2"))
    }

    @Test func anUnresolvedReplyKeepsItsQuote() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let body = "> Alice:\n> hello\nthanks"
        let reply = message(f, "romeo", body, stanzaID: "S2", references: MessageReferences(
            reply: .init(to: nil, id: "S-unknown"), fallbacks: [.init(feature: "urn:xmpp:reply:0", ranges: [0..<17])]))
        let delivery = try sent(deliver(&f, reply, Targets()))
        guard case .message(let outgoing, _)? = delivery.sends.first, delivery.sends.count == 1 else {
            Issue.record("not one message: \(delivery.sends)")
            return
        }
        #expect(outgoing.body == body)
        #expect(outgoing.relatesTo == nil)
        #expect(outgoing.mentions.isEmpty)
    }

    @Test func aReplyToAnXMPPMessageMentionsNoOne() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let quote = "> romeo:\n> hello\n"
        let reply = message(f, "juliet", quote + "yes", stanzaID: "S2", references: MessageReferences(
            reply: .init(to: f.muc.with(resource: "romeo"), id: "S1"),
            fallbacks: [.init(feature: "urn:xmpp:reply:0", ranges: [0..<quote.unicodeScalars.count])]))
        let delivery = try sent(deliver(&f, reply, Targets(reply: romeosMessage(f))))
        #expect(delivery.sends == [.message(OutgoingMatrixMessage(kind: .text, body: "yes", relatesTo: .reply(to: EventID("$r1")!)),
                                            txnID: txnID(f, "S2"))])
    }

    // MARK: XMPP → Matrix: corrections

    @Test func aCorrectionOfTheSendersOwnMessageIsAnEditFromTheSameGhost() throws {
        var f = MachineFixture()
        f.activate()
        let correction = message(f, "romeo", "fixed", stanzaID: "S2", id: "m2", references: MessageReferences(replaces: "m1"))
        let delivery = try sent(deliver(&f, correction, Targets(original: romeosMessage(f))))
        #expect(delivery.ghost == f.ghost(of: "romeo", occupantID: "occ-romeo"))
        #expect(delivery.sends == [.message(OutgoingMatrixMessage(
            kind: .text, body: "* fixed", relatesTo: .replacing(EventID("$r1")!), mentions: [],
            replacement: .init(body: "fixed", html: nil, mentions: [])), txnID: txnID(f, "S2"))])
        #expect(delivery.record.kind == .edit)
        #expect(delivery.record.target == EventID("$r1"))
        #expect(delivery.record.xmppID == StanzaAttributeID("m2"))
        // Once sent, the correction is mapped to its own event (later references to its stanza-id find the original).
        #expect(f.act(.matrixDelivery(.delivered(delivery, eventIDs: [EventID("$r2")!]))).first
                == .matrixDelivery(.recordBridged({ var r = delivery.record; r.eventID = EventID("$r2"); return r }(), reactions: ReactionChange())))
    }

    @Test func aCorrectionOfSomeoneElsesMessageIsANormalMessage() throws {
        var f = MachineFixture()
        f.activate()
        let correction = message(f, "juliet", "fixed", stanzaID: "S2", references: MessageReferences(replaces: "m1"))
        let delivery = try sent(deliver(&f, correction, Targets(original: romeosMessage(f))))
        #expect(delivery.ghost == f.ghost(of: "juliet", occupantID: "occ-juliet"))
        #expect(delivery.sends == [.message(OutgoingMatrixMessage(kind: .text, body: "fixed"), txnID: txnID(f, "S2"))])
        #expect(delivery.record.kind == .message)
        #expect(delivery.record.target == nil)
    }

    // MARK: XMPP → Matrix: retractions and moderation

    @Test func aRetractionByTheAuthorRedactsAsTheirGhost() throws {
        var f = MachineFixture()
        f.activate()
        let retraction = message(f, "romeo", nil, stanzaID: "S3", references: MessageReferences(retractions: [.current(id: "S1")]))
        let delivery = try sent(deliver(&f, retraction, Targets(retracted: romeosMessage(f))))
        #expect(delivery.ghost == f.ghost(of: "romeo", occupantID: "occ-romeo"))
        #expect(delivery.sends == [.redaction(EventID("$r1")!, reason: nil, txnID: txnID(f, "S3"))])
        #expect(delivery.record.kind == .retraction)
        #expect(delivery.record.target == EventID("$r1"))
        #expect(delivery.record.sender == romeo)
    }

    @Test func aRetractionBySomeoneElseIsRecordedFailedAndLoggedNotSent() {
        var f = MachineFixture()
        f.activate()
        let retraction = message(f, "juliet", nil, stanzaID: "S3", references: MessageReferences(retractions: [.current(id: "S1")]))
        #expect(f.act(.xmppMessage(retraction)) == [.matrixDelivery(.lookUpBridged(retraction))])
        let actions = f.machine.receive(.matrixDelivery(.lookedUp(retraction, bridged: false, targets: Targets(retracted: romeosMessage(f)))), now: f.t0)
        guard actions.count == 2, case .matrixDelivery(.log(let entry)) = actions[0] else {
            Issue.record("expected a log line and a record: \(actions)")
            return
        }
        #expect(entry.metadata["xmpp.nick"] == "juliet")
        #expect(actions[1] == .matrixDelivery(.recordRefused(MessageMapping(
            room: f.room, eventID: nil, stanzaID: StanzaID("S3"), originID: nil, direction: .xmppToMatrix, sender: juliet,
            state: .failed, nick: "juliet"))))
    }

    @Test func aModerationFromTheRoomIsARedactionByTheBot() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let moderation = message(f, "", nil, stanzaID: "S4", references: MessageReferences(
            moderation: .init(stanzaID: "S0", by: f.muc.with(resource: "mod"), reason: "spam")))
        let delivery = try sent(deliver(&f, moderation, Targets(moderated: alicesMessage(f))))
        #expect(delivery.ghost == f.bot)
        #expect(delivery.setup == nil)
        #expect(delivery.sends == [.redaction(EventID("$a1")!, reason: "spam", txnID: txnID(f, "S4"))])
        #expect(delivery.record.kind == .retraction)
        #expect(delivery.record.target == EventID("$a1"))
        // Without a reason the bot gives one.
        let unexplained = message(f, "", nil, stanzaID: "S5", references: MessageReferences(moderation: .init(stanzaID: "S0", by: nil, reason: nil)))
        #expect(try sent(deliver(&f, unexplained, Targets(moderated: alicesMessage(f)))).sends
                == [.redaction(EventID("$a1")!, reason: "Removed by a moderator of the XMPP room", txnID: txnID(f, "S5"))])
    }

    @Test func aModerationElementFromAnOccupantIsIgnored() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let forged = MessageReferences(moderation: .init(stanzaID: "S0", by: nil, reason: "gotcha"))
        // Without a body there is nothing else to it.
        #expect(f.act(.xmppMessage(message(f, "romeo", nil, stanzaID: "S4", references: forged))) == [])
        // With a body it is a plain message from romeo's ghost, even if the lookup had found the named message.
        let withBody = message(f, "romeo", "hi", stanzaID: "S5", references: forged)
        var cleaned = withBody
        cleaned.references.moderation = nil
        #expect(f.act(.xmppMessage(withBody)) == [.matrixDelivery(.lookUpBridged(cleaned))])
        let delivery = try sent(f.act(.matrixDelivery(.lookedUp(cleaned, bridged: false, targets: Targets(moderated: alicesMessage(f))))))
        #expect(delivery.ghost == f.ghost(of: "romeo", occupantID: "occ-romeo"))
        #expect(delivery.sends == [.message(OutgoingMatrixMessage(kind: .text, body: "hi"), txnID: txnID(f, "S5"))])
        // A room message without a moderation (a subject, a status) is not bridged.
        #expect(f.act(.xmppMessage(message(f, "", "room notice", stanzaID: "S6", references: MessageReferences()))) == [])
    }

    // MARK: XMPP → Matrix: reactions

    func reaction(_ f: MachineFixture, _ key: String, _ eventID: String?, by sender: MessageSender? = nil) -> Reaction {
        Reaction(room: f.room, target: EventID("$a1")!, reactor: sender ?? romeo, key: key, eventID: eventID.flatMap(EventID.init))
    }

    @Test func aReactionSetIsDiffedAgainstTheStoredOne() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let set = message(f, "romeo", nil, stanzaID: "S5", references: MessageReferences(reactions: .init(id: "S0", keys: ["🐢", "🎉", "❤️"])))
        let stored = [reaction(f, "👍", "$g1"), reaction(f, "🐢", "$g2")]
        let delivery = try sent(deliver(&f, set, Targets(reacted: alicesMessage(f), reactions: stored)))
        #expect(delivery.ghost == f.ghost(of: "romeo", occupantID: "occ-romeo"))
        let target = EventID("$a1")!
        #expect(delivery.sends == [
            .reaction(target: target, key: "🎉", txnID: txnID(f, "S5", "+🎉")),
            .reaction(target: target, key: "❤️", txnID: txnID(f, "S5", "+❤️")),
            .redaction(EventID("$g1")!, reason: nil, txnID: txnID(f, "S5", "-👍")),
        ])
        // Each send has its own txnId, none the plain message's.
        let txnIDs = delivery.sends.map { send -> ClientTransactionID in
            switch send {
            case .message(_, let id), .reaction(_, _, let id), .redaction(_, _, let id), .media(_, _, let id): id
            }
        }
        #expect(Set(txnIDs + [txnID(f, "S5")]).count == 4)
        #expect(delivery.record.kind == .reaction)
        #expect(delivery.record.target == target)
        #expect(delivery.reactions == ReactionChange(added: [reaction(f, "🎉", nil), reaction(f, "❤️", nil)], removed: [stored[0]]))

        // The same set again (a reconnect, the archive) gives the same txnIds: the homeserver sends each once.
        var g = MachineFixture()
        g.activate(members: [g.alice: "Alice"])
        #expect(try sent(deliver(&g, set, Targets(reacted: alicesMessage(g), reactions: stored))).sends == delivery.sends)

        // Sent: the added reactions get their event ids (in send order; nil: it was there already), the rest is kept.
        let recorded = f.act(.matrixDelivery(.delivered(delivery, eventIDs: [EventID("$x1")!, nil, EventID("$x3")!])))
        #expect(recorded.first == .matrixDelivery(.recordBridged(delivery.record, reactions: ReactionChange(
            added: [reaction(f, "🎉", "$x1"), reaction(f, "❤️", nil)], removed: [stored[0]]))))
    }

    @Test func anUnchangedReactionSetIsOnlyRecorded() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let set = message(f, "romeo", nil, stanzaID: "S5", references: MessageReferences(reactions: .init(id: "S0", keys: ["👍"])))
        let actions = deliver(&f, set, Targets(reacted: alicesMessage(f), reactions: [reaction(f, "👍", "$g1")]))
        var record = MessageMapping(room: f.room, eventID: nil, stanzaID: StanzaID("S5"), originID: nil, direction: .xmppToMatrix,
                                    sender: romeo, state: .delivered, kind: .reaction, nick: "romeo", target: EventID("$a1"))
        record.xmppID = nil
        #expect(actions == [.matrixDelivery(.recordBridged(record, reactions: ReactionChange()))])
    }

    @Test func anEmptySetRemovesEveryReaction() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let set = message(f, "romeo", nil, stanzaID: "S5", references: MessageReferences(reactions: .init(id: "S0", keys: [])))
        let stored = [reaction(f, "👍", "$g1"), reaction(f, "🐢", "$g2")]
        let delivery = try sent(deliver(&f, set, Targets(reacted: alicesMessage(f), reactions: stored)))
        #expect(delivery.sends == [.redaction(EventID("$g1")!, reason: nil, txnID: txnID(f, "S5", "-👍")),
                                   .redaction(EventID("$g2")!, reason: nil, txnID: txnID(f, "S5", "-🐢"))])
        #expect(delivery.reactions == ReactionChange(removed: stored))
    }

    @Test func reactionsToAnUnbridgedMessageAreRecordedFailed() {
        var f = MachineFixture()
        f.activate()
        let set = message(f, "romeo", nil, stanzaID: "S5", references: MessageReferences(reactions: .init(id: "S-unknown", keys: ["👍"])))
        let actions = deliver(&f, set, Targets())
        guard case .matrixDelivery(.recordRefused(let record))? = actions.first, actions.count == 1 else {
            Issue.record("expected a refusal record: \(actions)")
            return
        }
        #expect(record.state == .failed)
        #expect(record.stanzaID == StanzaID("S5"))
    }

    // MARK: Matrix → XMPP

    /// A Matrix message from `sender` with `details`.
    func matrixMessage(_ f: MachineFixture, _ seq: Int64, from sender: UserID, _ body: String,
                       details: MessageDetails) -> QueuedMatrixEvent {
        QueuedMatrixEvent(seq: seq, event: MatrixRoomEvent(eventID: EventID("$e\(seq)")!, room: f.room, sender: sender,
                                                           content: .message(msgtype: .text, body: body, details: details)))
    }

    func matrixEvent(_ f: MachineFixture, _ seq: Int64, from sender: UserID, _ content: MatrixRoomEvent.Content) -> QueuedMatrixEvent {
        QueuedMatrixEvent(seq: seq, event: MatrixRoomEvent(eventID: EventID("$e\(seq)")!, room: f.room, sender: sender, content: content))
    }

    /// The event handed in, its targets resolved: what the machine does.
    func resolve(_ f: inout MachineFixture, _ queued: QueuedMatrixEvent, _ targets: PortalStateMachine.MatrixTargets) -> [MachineFixture.Action] {
        #expect(f.act(.matrixEvents([queued])) == [.xmppDelivery(.resolveMatrixTargets(queued))])
        return f.act(.xmppDelivery(.targetsResolved(queued, targets)))
    }

    /// No Matrix id of any kind in an XMPP body.
    func expectNoMatrixIDs(_ body: String?, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let body else { return }
        for leak in ["@alice", "@bob", ":localhost", "$", "!room", "mxc://", "matrix.to"] {
            #expect(!body.contains(leak), "\(leak) in \(body)", sourceLocation: sourceLocation)
        }
    }

    @Test func aMatrixReplyNamesTheStanzaIDAndQuotesWithoutMatrixIDs() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice", f.bob: "Bob"])
        // With the legacy fallback, which carries Matrix ids.
        let html = #"<mx-reply><blockquote><a href="https://matrix.to/#/!room:localhost/$a1">In reply to</a> "#
            + #"<a href="https://matrix.to/#/@alice:localhost">@alice:localhost</a><br>hello</blockquote></mx-reply>thanks"#
        let reply = matrixMessage(f, 1, from: f.bob, "> <@alice:localhost> hello\n\nthanks",
                                  details: MessageDetails(html: html, replyTo: EventID("$a1")))
        let out = try mapped(resolve(&f, reply, .init(reply: alicesMessage(f))))
        let quote = "> Alice:\n> hello\n"
        #expect(out.mapping.body == quote + "thanks")
        #expect(out.delivery.stanza == OutgoingGroupchat(body: quote + "thanks", references: MessageReferences(
            reply: .init(to: f.muc.with(resource: "Alice"), id: "S0"),
            fallbacks: [.init(feature: "urn:xmpp:reply:0", ranges: [0..<quote.unicodeScalars.count])])))
        #expect(out.delivery.user == f.bob)
        #expect(out.seq == 1)
        #expect(out.reaction == nil)
        #expect(out.mapping.kind == .message)
        #expect(out.mapping.excerpt == "thanks")
        #expect(out.mapping.nick == "Bob")
        #expect(out.mapping.sender == .matrix(f.bob))
        #expect(out.mapping.state == .sending)
        expectNoMatrixIDs(out.mapping.body)
        // The payload is the stanza: a resend after a restart carries the same references.
        #expect(OutgoingGroupchat(mapping: out.mapping) == out.delivery.stanza)
        // Mapped: the puppet sends it.
        #expect(f.act(.xmppDelivery(.mappingInserted(out.delivery, inserted: true))) == [.groupchat(out.delivery)])
    }

    @Test func aMatrixReplyToAnXMPPMessageQuotesItsNick() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let reply = matrixMessage(f, 1, from: f.alice, "yes", details: MessageDetails(replyTo: EventID("$r1")))
        let out = try mapped(resolve(&f, reply, .init(reply: romeosMessage(f))))
        #expect(out.delivery.stanza.body == "> romeo:\n> hello\nyes")
        #expect(out.delivery.stanza.references.reply == .init(to: f.muc.with(resource: "romeo"), id: "S1"))
        // A target the room gave no stanza-id cannot be named (XEP-0461): the quote alone keeps the context.
        var unnamed = romeosMessage(f)
        unnamed.stanzaID = nil
        let toUnnamed = matrixMessage(f, 2, from: f.alice, "yes", details: MessageDetails(replyTo: EventID("$r1")))
        let quoted = try mapped(resolve(&f, toUnnamed, .init(reply: unnamed)))
        #expect(quoted.delivery.stanza.body == "> romeo:\n> hello\nyes")
        #expect(quoted.delivery.stanza.references.reply == nil)
        // A reply to something that is not a message (a reaction row) is sent as plain text.
        var reactionRow = romeosMessage(f)
        reactionRow.kind = .reaction
        let toReaction = matrixMessage(f, 3, from: f.alice, "yes", details: MessageDetails(replyTo: EventID("$r1")))
        #expect(try mapped(resolve(&f, toReaction, .init(reply: reactionRow))).delivery.stanza == OutgoingGroupchat(body: "yes"))
    }

    @Test func aMatrixEditOfOwnMessageNamesTheOriginalsID() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let original = alicesMessage(f)
        let edit = matrixMessage(f, 2, from: f.alice, "fixed", details: MessageDetails(replaces: EventID("$a1")))
        let out = try mapped(resolve(&f, edit, .init(original: original)))
        #expect(out.delivery.stanza == OutgoingGroupchat(body: "fixed", references: MessageReferences(replaces: original.xmppID!.rawValue)))
        #expect(out.mapping.kind == .edit)
        #expect(out.mapping.target == EventID("$a1"))
        // The edit has its own origin-id (XEP-0308 wants a fresh one).
        #expect(out.delivery.originID == f.naming.originID(for: EventID("$e2")!))
        #expect(out.delivery.originID != original.originID)
        #expect(OutgoingGroupchat(mapping: out.mapping) == out.delivery.stanza)
    }

    @Test func aMatrixEditOfSomeoneElsesMessageIsDequeued() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice", f.bob: "Bob"])
        let edit = matrixMessage(f, 2, from: f.bob, "fixed", details: MessageDetails(replaces: EventID("$a1")))
        #expect(resolve(&f, edit, .init(original: alicesMessage(f))) == [.xmppDelivery(.dequeue(seq: 2))])
        // An XMPP user's message cannot be edited from Matrix either.
        let other = matrixMessage(f, 3, from: f.alice, "fixed", details: MessageDetails(replaces: EventID("$r1")))
        #expect(resolve(&f, other, .init(original: romeosMessage(f))) == [.xmppDelivery(.dequeue(seq: 3))])
        // Nor an unknown one.
        let unknown = matrixMessage(f, 4, from: f.alice, "fixed", details: MessageDetails(replaces: EventID("$zz")))
        #expect(resolve(&f, unknown, .init()) == [.xmppDelivery(.dequeue(seq: 4))])
    }

    @Test func aMatrixReactionSendsTheFullSetWithAStoreHint() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let earlier = Reaction(room: f.room, target: EventID("$r1")!, reactor: .matrix(f.alice), key: "👍", eventID: EventID("$e1"))
        let react = matrixEvent(f, 2, from: f.alice, .reaction(target: EventID("$r1")!, key: "🎉"))
        let out = try mapped(resolve(&f, react, .init(reacted: romeosMessage(f), reactions: [earlier])))
        #expect(out.delivery.stanza == OutgoingGroupchat(body: nil, references: MessageReferences(
            reactions: .init(id: "S1", keys: ["👍", "🎉"]), store: true)))
        #expect(out.reaction == ReactionChange(added: [Reaction(room: f.room, target: EventID("$r1")!, reactor: .matrix(f.alice),
                                                                key: "🎉", eventID: EventID("$e2"))]))
        #expect(out.mapping.kind == .reaction)
        #expect(out.mapping.target == EventID("$r1"))
        #expect(out.mapping.body == nil)
        #expect(OutgoingGroupchat(mapping: out.mapping) == out.delivery.stanza)
        // A key the user has already is nothing new.
        let again = matrixEvent(f, 3, from: f.alice, .reaction(target: EventID("$r1")!, key: "👍"))
        #expect(resolve(&f, again, .init(reacted: romeosMessage(f), reactions: [earlier])) == [.xmppDelivery(.dequeue(seq: 3))])
        // A message the room gave no stanza-id cannot be reacted to (XEP-0444).
        var unnamed = romeosMessage(f)
        unnamed.stanzaID = nil
        let noID = matrixEvent(f, 4, from: f.alice, .reaction(target: EventID("$r1")!, key: "🐢"))
        #expect(resolve(&f, noID, .init(reacted: unnamed)) == [.xmppDelivery(.dequeue(seq: 4))])
    }

    @Test func redactingAMatrixReactionSendsTheReducedSet() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let thumbs = Reaction(room: f.room, target: EventID("$r1")!, reactor: .matrix(f.alice), key: "👍", eventID: EventID("$e1"))
        let party = Reaction(room: f.room, target: EventID("$r1")!, reactor: .matrix(f.alice), key: "🎉", eventID: EventID("$e2"))
        let redact = matrixEvent(f, 3, from: f.alice, .redaction(target: EventID("$e1")!, reason: nil))
        let out = try mapped(resolve(&f, redact, .init(reacted: romeosMessage(f), reactions: [thumbs, party], redactedReaction: thumbs)))
        #expect(out.delivery.stanza == OutgoingGroupchat(body: nil, references: MessageReferences(
            reactions: .init(id: "S1", keys: ["🎉"]), store: true)))
        #expect(out.delivery.user == f.alice)
        #expect(out.reaction == ReactionChange(removed: [thumbs]))
        #expect(out.mapping.kind == .reaction)
        #expect(out.mapping.target == EventID("$r1"))
        // The last one removed: an empty set.
        let last = matrixEvent(f, 4, from: f.alice, .redaction(target: EventID("$e2")!, reason: nil))
        let emptied = try mapped(resolve(&f, last, .init(reacted: romeosMessage(f), reactions: [party], redactedReaction: party)))
        #expect(emptied.delivery.stanza.references.reactions == .init(id: "S1", keys: []))
    }

    @Test func redactingOwnMessageRetractsItInBothForms() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let original = alicesMessage(f)
        let redact = matrixEvent(f, 3, from: f.alice, .redaction(target: EventID("$a1")!, reason: "oops"))
        let out = try mapped(resolve(&f, redact, .init(redacted: original)))
        var references = MessageReferences(retractions: [.current(id: "S0"), .legacy(originID: original.originID!.rawValue)], store: true)
        references.fallbacks = [.init(feature: "urn:xmpp:message-retract:1", ranges: nil)]
        #expect(out.delivery.stanza == OutgoingGroupchat(body: "/me retracted a previous message, but it's unsupported by your client.",
                                                         references: references))
        #expect(out.delivery.user == f.alice)
        #expect(out.mapping.kind == .retraction)
        #expect(out.mapping.target == EventID("$a1"))
        #expect(OutgoingGroupchat(mapping: out.mapping) == out.delivery.stanza)
        // Not yet receipted (no stanza-id): the :1 form names the origin-id (XEP-0424 allows it).
        var pending = original
        pending.stanzaID = nil
        let early = matrixEvent(f, 4, from: f.alice, .redaction(target: EventID("$a1")!, reason: nil))
        let fallback = try mapped(resolve(&f, early, .init(redacted: pending)))
        #expect(fallback.delivery.stanza.references.retractions == [.current(id: original.originID!.rawValue),
                                                                    .legacy(originID: original.originID!.rawValue)])
    }

    @Test func aModeratorsRedactionIsAskedOfAModeratingRoomByTheirPuppet() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"], features: RoomFeatures(stanzaIDs: true, archive: true, moderation: .legacy))
        let puppet = try #require(f.machine.puppets[f.alice])
        let redact = matrixEvent(f, 3, from: f.alice, .redaction(target: EventID("$r1")!, reason: "spam"))
        let romeos = romeosMessage(f)
        let job = PortalStateMachine.ModerationJob(user: f.alice, occupant: puppet.occupant,
                                                   request: ModerationRequest(stanzaID: romeos.stanzaID!.rawValue, reason: "spam", version: .legacy),
                                                   seq: 3, eventID: redact.event.eventID)
        #expect(resolve(&f, redact, .init(redacted: romeos)) == [.xmppDelivery(.moderate(job))])
        #expect(f.act(.xmppDelivery(.moderated(job, nil))) == [.xmppDelivery(.dequeue(seq: 3))])
        // The room refuses (the puppet is no moderator there): the Matrix room is told why.
        let again = matrixEvent(f, 4, from: f.alice, .redaction(target: EventID("$r1")!, reason: "spam"))
        var refusedJob = job
        refusedJob.seq = 4
        refusedJob.eventID = again.event.eventID
        #expect(resolve(&f, again, .init(redacted: romeos)) == [.xmppDelivery(.moderate(refusedJob))])
        #expect(f.act(.xmppDelivery(.moderated(refusedJob, .refused(StanzaErrorInfo(condition: .forbidden, text: nil))))) == [
            .xmppDelivery(.postNotice("⚠️ Alice removed a message of an XMPP user here, but it stays in the XMPP room: their XMPP occupant is not a moderator there.",
                        subject: "redaction:\(again.event.eventID.rawValue)")),
            .xmppDelivery(.dequeue(seq: 4)),
        ])
    }

    /// Alice reacts (seq 3) to her own message `$a1` before the MUC reflected it: the drain pauses until the
    /// reflection (or 10 s). Returns the machine, the not-yet-receipted mapping and the reaction.
    func reactionWaitingForAReflection() -> (MachineFixture, MessageMapping, QueuedMatrixEvent) {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        var pending = alicesMessage(f)
        pending.stanzaID = nil
        pending.state = .sending
        let react = matrixEvent(f, 3, from: f.alice, .reaction(target: EventID("$a1")!, key: "👍"))
        #expect(resolve(&f, react, .init(reacted: pending)) == [.schedule(.drainResume, at: f.t0 + .seconds(10))])
        return (f, pending, react)
    }

    @Test func aReactionToOurMessageNotYetReflectedWaitsForTheReflectionBounded() throws {
        var (f, pending, react) = reactionWaitingForAReflection()
        // The reflection of our message arrives: its receipt is recorded, then the inbox is drained again.
        let reflection = RoomMessage(room: f.muc, nick: "Alice", to: f.naming.botOccupant, stanzaID: StanzaID("S0"),
                                     originID: pending.originID, body: "hello")
        #expect(f.act(.xmppMessage(reflection)) == [.matrixDelivery(.recordReflection(originID: pending.originID, stanzaID: StanzaID("S0"))),
                                                    .catchUp(.readInbox)])
        #expect(f.act(.catchUp(.inboxRead([react]))) == [.xmppDelivery(.resolveMatrixTargets(react))])
        let sent = try mapped(f.act(.xmppDelivery(.targetsResolved(react, .init(reacted: alicesMessage(f))))))
        #expect(sent.delivery.stanza.references.reactions == .init(id: "S0", keys: ["👍"]))
        #expect(f.machine.xmppDelivery.receiptWait == nil)
    }

    @Test func aReactionWaitingTooLongForTheReflectionIsSkipped() {
        var (f, pending, react) = reactionWaitingForAReflection()
        let late = f.t0 + .seconds(10)
        #expect(f.act(.resumeDrain, at: late) == [.catchUp(.readInbox)])
        #expect(f.act(.catchUp(.inboxRead([react])), at: late) == [.xmppDelivery(.resolveMatrixTargets(react))])
        #expect(f.act(.xmppDelivery(.targetsResolved(react, .init(reacted: pending))), at: late) == [.xmppDelivery(.dequeue(seq: 3))])
        #expect(f.machine.xmppDelivery.receiptWait == nil)
    }

    @Test func redactingAnXMPPUsersMessageTellsTheRoomAndDequeues() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let redact = matrixEvent(f, 3, from: f.alice, .redaction(target: EventID("$r1")!, reason: nil))
        #expect(resolve(&f, redact, .init(redacted: romeosMessage(f))) == [
            .xmppDelivery(.postNotice("⚠️ Alice removed a message of an XMPP user here, but it stays in the XMPP room: the XMPP room does not support moderation.",
                        subject: "redaction:$e3")),
            .xmppDelivery(.dequeue(seq: 3)),
        ])
        // A redaction of something never bridged.
        let unknown = matrixEvent(f, 4, from: f.alice, .redaction(target: EventID("$zz")!, reason: nil))
        #expect(resolve(&f, unknown, .init()) == [.xmppDelivery(.dequeue(seq: 4))])
    }

    @Test func aStoredRichMessageIsResentWithTheSameReferences() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let reply = matrixMessage(f, 1, from: f.alice, "yes", details: MessageDetails(replyTo: EventID("$r1")))
        let out = try mapped(resolve(&f, reply, .init(reply: romeosMessage(f))))
        // A restart before the reflection: the mapping is loaded unreceipted and resent from its payload.
        var g = MachineFixture()
        _ = g.act(.activate)
        _ = g.act(.botJoinedMatrix(error: nil))
        _ = g.act(.botJoinedMUC(g.botJoin, .joined(nick: "Matrix", created: false)))
        _ = g.act(.roomLoaded(g.snapshot(last: StanzaID("S1")!, undelivered: [out.mapping])))
        _ = g.act(.catchUp(.archiveFetched([])))
        let join = g.puppetJoin(g.alice, "Alice", then: .sync)
        #expect(g.act(.puppets(.membersFetched([g.alice: "Alice"]))) == [.puppets(.join(join))])
        #expect(g.act(.puppets(.joinAnswered(join, .joined(nick: "Alice", created: false)))).last == .loadUndelivered)
        let resend = PortalStateMachine.XMPPDelivery(user: g.alice, originID: out.delivery.originID, stanza: out.delivery.stanza,
                                                     purpose: .resend)
        #expect(g.act(.undeliveredLoaded([out.mapping])) == [.groupchat(resend)])
        #expect(resend.stanza.references.reply == .init(to: g.muc.with(resource: "romeo"), id: "S1"))
    }
}
