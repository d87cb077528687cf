import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import IsthmusCommon
import TestSupport
import XCTest
import XMLStream
import XMPP

/// Gateway mode from XMPP against real servers: XMPP users join Matrix rooms through the component
/// (`#alias%server@component/nick`, `gateway.xmpp_rooms`) — the Matrix room's join rules decide; the component then
/// speaks as a MUC: occupants, self-presence, history, subject, messages both ways with one reflection, leave; and a
/// restart of `serve` keeps them in.
final class GatewayRoomsTests: XCTestCase {
    func startGatewayBridge(_ world: EndToEndHarness, extra: String = "") async throws {
        try world.editConfig { $0 + "\ngateway:\n  xmpp_rooms: true\n" + extra }
        try await world.startBridge()
    }

    /// A public Matrix room of alice's with an alias; returns its id and the MUC address of the alias.
    func publicRoom(_ world: EndToEndHarness, _ alice: MatrixTestUser, _ name: String, topic: String? = nil) async throws -> (String, JID) {
        let localpart = "\(name)-\(world.suffix)"
        let room = try await alice.createRoom(aliasLocalpart: localpart, name: "Gateway \(name)")
        try await alice.setState("m.room.join_rules", content: ["join_rule": "public"], in: room)
        if let topic { try await alice.setState("m.room.topic", content: ["topic": topic], in: room) }
        return (room, JID("#\(localpart)%localhost@\(world.bed.componentDomain)")!)
    }

    /// Joins `address` as `nick` asking for `history` messages; returns the presences up to the self-presence, and the
    /// messages up to the subject (history first).
    func join(_ client: XMPPTestClient, _ address: JID, nick: String, history: Int) async throws -> (presences: [Presence], messages: [Message]) {
        let occupant = address.with(resource: nick)!
        try client.send(.presence(Presence(to: occupant, mucJoin: MUCJoinRequest(history: history == 0 ? MUCHistoryRequest.none : .maxStanzas(history)))))
        var presences: [Presence] = []
        while presences.last?.statusCodes.contains(.selfPresence) != true {
            let presence = try await client.nextPresence(within: 30, "presences from \(address)") { $0.from?.bare == address }
            if let error = presence.error { throw error }
            presences.append(presence)
        }
        var messages: [Message] = []
        while messages.last?.subject == nil {
            messages.append(try await client.nextMessage(within: 30, "history and subject of \(address)") { $0.from?.bare == address })
        }
        return (presences, messages)
    }

    func testAnXMPPUserJoinsAMatrixRoomAndTalksBothWays() async throws {
        let world = try EndToEndHarness("gateway-rooms")
        try await startGatewayBridge(world)
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let (room, address) = try await publicRoom(world, alice, "lounge", topic: "Tea at five")
        try await alice.setDisplayname("Alice", in: room)
        try await alice.send("before anyone from XMPP", to: room)

        let juliet = try await world.xmppUser("bob")
        defer { juliet.close() }
        let (presences, messages) = try await join(juliet, address, nick: "Juliet", history: 5)
        XCTAssertEqual(presences.compactMap(\.from?.resource), ["Alice", "Juliet"], "Alice, then the self-presence")
        XCTAssertEqual(messages.last?.subject, "Tea at five")
        XCTAssertEqual(messages.dropLast().compactMap(\.body), ["before anyone from XMPP"], "the history, from Alice")
        XCTAssertEqual(messages.first?.from?.resource, "Alice")
        XCTAssertNotNil(messages.first?.delay)
        // Her ghost is in the Matrix room under her nick.
        let members = try await alice.members(of: room)
        XCTAssertTrue(members.values.contains("Juliet"), "\(members)")

        // XMPP → Matrix, reflected to her once with the Matrix event id as stanza-id.
        let sent = try juliet.sendGroupchat(to: address, body: "hello from xmpp")
        let reflection = try await juliet.nextMessage(within: 30, "the reflection") { $0.originID == sent.originID }
        let seen = try await world.matrixMessages(alice, in: room, untilBody: "hello from xmpp", excluding: alice.userID)
        XCTAssertEqual(seen.map(\.body), ["hello from xmpp"])
        XCTAssertEqual(reflection.stanzaIDs.first?.id.rawValue, seen.first?.eventID)
        XCTAssertEqual(reflection.from?.resource, "Juliet")

        // Matrix → XMPP.
        try await alice.send("hello from matrix", to: room)
        let heard = try await juliet.nextMessage(within: 30, "alice's message") { $0.body == "hello from matrix" }
        XCTAssertEqual(heard.from, address.with(resource: "Alice"))

        // A second XMPP user: each sees the other once, and their messages.
        let romeo = try await world.xmppUser("carol")
        defer { romeo.close() }
        let (romeoSees, _) = try await join(romeo, address, nick: "Romeo", history: 0)
        XCTAssertEqual(romeoSees.compactMap(\.from?.resource).sorted(), ["Alice", "Juliet", "Romeo"])
        let julietSeesRomeo = try await juliet.nextPresence(within: 30, "Romeo's arrival") { $0.from == address.with(resource: "Romeo") }
        XCTAssertEqual(julietSeesRomeo.type, .available)
        _ = try romeo.sendGroupchat(to: address, body: "romeo here")
        let fromRomeo = try await juliet.nextMessage(within: 30, "romeo's message") { $0.body == "romeo here" }
        XCTAssertEqual(fromRomeo.from?.resource, "Romeo")
        // Sentinel: Alice's next message reaches Juliet after Romeo's and nothing of Romeo's came twice.
        try await alice.send("sentinel", to: room)
        _ = try await juliet.nextMessage(within: 30, "the sentinel") { $0.body == "sentinel" }
        XCTAssertFalse(juliet.queuedStanzas.contains { if case .message(let m) = $0 { m.body == "romeo here" } else { false } },
                       "Romeo's message reached Juliet once")

        // Leaving: the ghost leaves the Matrix room, and Juliet sees Romeo go.
        try romeo.send(.presence(Presence(type: .unavailable, to: address.with(resource: "Romeo")!)))
        let gone = try await juliet.nextPresence(within: 30, "Romeo leaving") { $0.from == address.with(resource: "Romeo") }
        XCTAssertEqual(gone.type, .unavailable)
        try await eventually("romeo's ghost left the Matrix room", timeout: 20) {
            !(try await alice.members(of: room).values.contains("Romeo"))
        }
    }

    func testRefusalsAreMUCErrors() async throws {
        let world = try EndToEndHarness("gateway-rooms-refusals")
        try await startGatewayBridge(world, extra: "  max_joins_per_minute: 3\n")
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let juliet = try await world.xmppUser("bob")
        defer { juliet.close() }
        // An invite-only room: forbidden, and no ghost membership is left behind.
        let privateLocalpart = "private-\(world.suffix)"
        let closed = try await alice.createRoom(aliasLocalpart: privateLocalpart)
        let closedAddress = JID("#\(privateLocalpart)%localhost@\(world.bed.componentDomain)")!
        do {
            _ = try await join(juliet, closedAddress, nick: "Juliet", history: 0)
            XCTFail("joined an invite-only room")
        } catch let error as StanzaError {
            XCTAssertEqual(error.condition, .forbidden)
        }
        let members = try await alice.members(of: closed)
        XCTAssertEqual(Array(members.keys), [alice.userID])
        // An alias nobody has: item-not-found.
        do {
            _ = try await join(juliet, JID("#nobody-\(world.suffix)%localhost@\(world.bed.componentDomain)")!, nick: "Juliet", history: 0)
            XCTFail("joined a room that does not exist")
        } catch let error as StanzaError {
            XCTAssertEqual(error.condition, .itemNotFound)
        }
        // A nick a Matrix member has: conflict.
        let (room, address) = try await publicRoom(world, alice, "nicks")
        try await alice.setDisplayname("Alice", in: room)
        // Asked before anyone is in, disco#info says whether the room exists.
        let info = try await juliet.discoInfo(of: address)
        XCTAssertTrue(info.identities.contains { $0.category == "conference" && $0.type == "text" })
        do {
            _ = try await juliet.discoInfo(of: JID("#typo-\(world.suffix)%localhost@\(world.bed.componentDomain)")!)
            XCTFail("a room that does not exist")
        } catch let error as StanzaError {
            XCTAssertEqual(error.condition, .itemNotFound)
        }
        do {
            _ = try await join(juliet, address, nick: "alice", history: 0)
            XCTFail("took a Matrix member's nick")
        } catch let error as StanzaError {
            XCTAssertEqual(error.condition, .conflict)
        }
        // That was Juliet's third join this minute: a fourth must wait.
        do {
            _ = try await join(juliet, address, nick: "Juliet", history: 0)
            XCTFail("a fourth join in a minute")
        } catch let error as StanzaError {
            XCTAssertEqual(error.condition, .resourceConstraint)
        }
    }

    func testARestartKeepsTheOccupantsIn() async throws {
        let world = try EndToEndHarness("gateway-rooms-restart")
        try await startGatewayBridge(world)
        let alice = try await world.matrixUser("alice")
        let (room, address) = try await publicRoom(world, alice, "restart")
        try await alice.setDisplayname("Alice", in: room)
        let juliet = try await world.xmppUser("bob")
        defer { juliet.close() }
        _ = try await join(juliet, address, nick: "Juliet", history: 0)
        world.stopBridge()
        try await alice.send("while the bridge was down", to: room)
        try await world.startBridge()
        defer { world.stopBridge() }
        // What was said meanwhile reaches her (the homeserver sends it again once the bridge is back).
        _ = try await juliet.nextMessage(within: 30, "the message sent while the bridge was down") { $0.body == "while the bridge was down" }
        // Still in: her messages go through, and a self-ping says she is in.
        let ping = IQ(type: .get, to: address.with(resource: "Juliet"), payload: .ping)
        try juliet.send(.iq(ping))
        let pong = try await juliet.nextStanza(within: 30, "the self-ping's answer") { if case .iq(let iq) = $0 { iq.id == ping.id } else { false } }
        if case .iq(let iq) = pong { XCTAssertNil(iq.error, "still an occupant after the restart") }
        _ = try juliet.sendGroupchat(to: address, body: "after the restart")
        let seen = try await world.matrixMessages(alice, in: room, untilBody: "after the restart", excluding: alice.userID)
        XCTAssertEqual(seen.map(\.body), ["after the restart"])
        try await alice.send("and back", to: room)
        _ = try await juliet.nextMessage(within: 30, "alice's message after the restart") { $0.body == "and back" }

        // A crash (kill -9) while Alice talks: all of it reaches Juliet once, in order. (The crash waits until "and back"
        // is done with: one caught between its stanza and the deletion of its inbox row would come again, with the same
        // stanza-id — docs/deploy.md says so.)
        try await eventually("the inbox emptied", timeout: 20) {
            try await MetricsScrape.fetch(port: world.bed.metricsPort)["isthmus_inbox_depth"] == 0
        }
        world.crashBridge()
        try await alice.send("during the crash 1", to: room)
        try await alice.send("during the crash 2", to: room)
        try await world.startBridge()
        try await alice.send("after the crash", to: room)
        var heard: [String] = []
        while heard.last != "after the crash" {
            let message = try await juliet.nextMessage(within: 30, "Alice's messages after the crash") {
                $0.from == address.with(resource: "Alice") && $0.body != nil
            }
            heard.append(message.body ?? "")
        }
        XCTAssertEqual(heard, ["during the crash 1", "during the crash 2", "after the crash"])
    }

    /// disco#items of the component as `client`, with RSM; the items' JIDs and the `last` to page on.
    func roomList(_ client: XMPPTestClient, _ world: EndToEndHarness, max: Int, after: String? = nil) async throws -> (items: [JID], last: String?) {
        var query = XElement("query", namespace: XMPPNamespace.discoItems)
        query.append(RSMSet(max: max, after: after).element)
        let answer = try await client.request(IQ(type: .get, to: JID(world.bed.componentDomain)!, payload: .other(query)), within: 20)
        if let error = answer.error { throw error }
        guard case .other(let result)? = answer.payload else { return ([], nil) }
        let items = result.children("item", namespace: XMPPNamespace.discoItems).compactMap { $0[attribute: "jid"].flatMap(JID.init) }
        let last = result.child("set", namespace: XMPPNamespace.rsm).flatMap { try? RSMSet(element: $0) }?.last
        return (items, last)
    }

    func testTheRoomListAndUpperCaseAliases() async throws {
        let world = try EndToEndHarness("gateway-rooms-list")
        try await startGatewayBridge(world)
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        // Two published rooms whose aliases have capitals, which XMPP addresses fold.
        let listed = try await alice.createRoom(aliasLocalpart: "Listed-\(world.suffix)", name: "Listed room")
        let searched = try await alice.createRoom(aliasLocalpart: "Searched-\(world.suffix)", name: "Searched room")
        for room in [listed, searched] {
            try await alice.setState("m.room.join_rules", content: ["join_rule": "public"], in: room)
            try await alice.setState("m.room.canonical_alias", content: ["alias": room == listed ? "#Listed-\(world.suffix):localhost"
                                                                                              : "#Searched-\(world.suffix):localhost"], in: room)
            try await alice.publish(room)
        }
        let bob = try await world.xmppUser("bob")
        defer { bob.close() }
        // Before any list: the folded address is found by a search of the directory.
        let searchedAddress = JID("#searched-\(world.suffix)%localhost@\(world.bed.componentDomain)")!
        _ = try await join(bob, searchedAddress, nick: "Bob", history: 0)

        // The component lists the directory's rooms at their addresses, a page at a time.
        var seen: [JID] = []
        var after: String?
        for _ in 0..<50 {
            let page = try await roomList(bob, world, max: 1, after: after)
            XCTAssertLessThanOrEqual(page.items.count, 1)
            seen += page.items
            guard let last = page.last else { break }
            after = last
        }
        let listedAddress = JID("#listed-\(world.suffix)%localhost@\(world.bed.componentDomain)")!
        XCTAssertTrue(seen.contains(listedAddress) && seen.contains(searchedAddress), "\(seen)")
        XCTAssertEqual(Set(seen).count, seen.count, "no room twice across pages")

        // A search (XEP-0055 with a form) finds it by a word of its name or alias.
        let component = JID(world.bed.componentDomain)!
        let form = try await bob.request(IQ(type: .get, to: component, payload: .other(XElement("query", namespace: XMPPNamespace.search))), within: 20)
        XCTAssertNil(form.error)
        let submitted = DataForm(type: "submit", fields: [.init("FORM_TYPE", type: "hidden", values: [XMPPNamespace.search]),
                                                          .init("term", values: ["listed-\(world.suffix)"])])
        let found = try await bob.request(IQ(type: .set, to: component, payload: .other(XElement("query", namespace: XMPPNamespace.search,
                                                                                                  children: [.element(submitted.element)]))), within: 20)
        guard case .other(let results)? = found.payload else { return XCTFail("no search results: \(found.element)") }
        let jids = results.child("x", namespace: XMPPNamespace.dataForms)?.children("item", namespace: XMPPNamespace.dataForms)
            .flatMap { $0.children("field", namespace: XMPPNamespace.dataForms) }
            .filter { $0[attribute: "var"] == "jid" }.compactMap { $0.child("value", namespace: XMPPNamespace.dataForms)?.text } ?? []
        XCTAssertEqual(jids, [listedAddress.description])

        // The listed address reaches its room too.
        _ = try await join(bob, listedAddress, nick: "Bob", history: 0)
        let listedMembers = try await alice.members(of: listed)
        let searchedMembers = try await alice.members(of: searched)
        XCTAssertTrue(listedMembers.values.contains("Bob") && searchedMembers.values.contains("Bob"))
    }

    /// A MAM query to `room` as `client`: the archived bodies in order, with their ids, and the fin.
    func archive(_ client: XMPPTestClient, _ room: JID, _ query: MAMQuery) async throws -> (bodies: [String], ids: [String], fin: MAMFin?) {
        let request = IQ(type: .set, to: room, payload: .mamQuery(query))
        try client.send(.iq(request))
        var bodies: [String] = [], ids: [String] = []
        while true {
            let stanza = try await client.nextStanza(within: 30, "the archive's answer") { stanza in
                switch stanza {
                case .iq(let iq): iq.id == request.id
                case .message(let message): message.extensionElement("result", namespace: XMPPNamespace.mam)?[attribute: "queryid"] == query.queryID
                default: false
                }
            }
            switch stanza {
            case .iq(let iq):
                if let error = iq.error { throw error }
                if case .mamFin(let fin)? = iq.payload { return (bodies, ids, fin) }
                return (bodies, ids, nil)
            case .message(let envelope):
                guard let archived = try ArchivedMessage(envelope: envelope) else { continue }
                bodies.append(archived.message.body ?? "")
                ids.append(archived.id.rawValue)
            default:
                continue
            }
        }
    }

    func testTheArchiveIsTheMatrixTimelinePagedBothWays() async throws {
        let world = try EndToEndHarness("gateway-rooms-mam")
        try await startGatewayBridge(world)
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let (room, address) = try await publicRoom(world, alice, "archive")
        for index in 1...5 { try await alice.send("m\(index)", to: room) }
        let bob = try await world.xmppUser("bob")
        defer { bob.close() }
        // Not an occupant: no archive.
        do {
            _ = try await archive(bob, address, MAMQuery(queryID: "early", rsm: RSMSet(max: 2)))
            XCTFail("a stranger read the archive")
        } catch let error as StanzaError {
            XCTAssertEqual(error.condition, .forbidden)
        }
        _ = try await join(bob, address, nick: "Bob", history: 0)
        let info = try await bob.discoInfo(of: address)
        XCTAssertTrue(info.features.contains(XMPPNamespace.mam))

        // The last page, oldest first.
        let last = try await archive(bob, address, MAMQuery(queryID: "q1", rsm: RSMSet(max: 2)))
        XCTAssertEqual(last.bodies, ["m4", "m5"])
        XCTAssertEqual(last.fin?.rsm?.first, last.ids.first)
        XCTAssertEqual(last.fin?.complete, false)
        // The page before it, by RSM.
        let earlier = try await archive(bob, address, MAMQuery(queryID: "q2", rsm: RSMSet(max: 2, before: last.ids.first)))
        XCTAssertEqual(earlier.bodies, ["m2", "m3"])
        // After an id (XEP-0313 after-id): what follows, to the end.
        let following = try await archive(bob, address, MAMQuery(queryID: "q3", afterID: StanzaID(earlier.ids[0]), rsm: RSMSet(max: 10)))
        XCTAssertEqual(following.bodies, ["m3", "m4", "m5"])
        XCTAssertEqual(following.fin?.complete, true)
    }

    /// The first timeline event of `room` (as `user` reads it) that `matches`, waiting for it.
    func timelineEvent(_ user: MatrixTestUser, in room: String, _ what: String,
                       where matches: @escaping @Sendable (MatrixTestUser.Event) -> Bool) async throws -> MatrixTestUser.Event {
        try await eventuallyValue(what, timeout: 30) { try await user.timeline(of: room).first(where: matches) }
    }

    func testRichMessagesBothWaysByEventID() async throws {
        let world = try EndToEndHarness("gateway-rooms-rich")
        try await startGatewayBridge(world)
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let (room, address) = try await publicRoom(world, alice, "rich")
        try await alice.setDisplayname("Alice", in: room)
        let bob = try await world.xmppUser("bob")
        defer { bob.close() }
        _ = try await join(bob, address, nick: "Bob", history: 0)

        // XMPP → Matrix: a message and its correction (by the message's own id).
        let first = try bob.sendGroupchat(to: address, body: "helo")
        let reflection = try await bob.nextMessage(within: 30, "the reflection") { $0.originID == first.originID }
        let original = try XCTUnwrap(reflection.stanzaIDs.first?.id.rawValue)
        var correction = MessageReferences()
        correction.replaces = first.id?.rawValue
        try bob.send(.message(Message(type: .groupchat, to: address, id: StanzaAttributeID("fix-1"), body: "hello", originID: OriginID("fix-1"),
                                      extensions: correction.elements)))
        let edit = try await timelineEvent(alice, in: room, "the edit") { $0.raw.at("content", "m.relates_to", "rel_type")?.stringValue == "m.replace" }
        XCTAssertEqual(edit.raw.at("content", "m.relates_to", "event_id")?.stringValue, original)
        XCTAssertEqual(edit.raw.at("content", "m.new_content", "body")?.stringValue, "hello")

        // Matrix → XMPP: Alice reacts to it, and Bob gets her set by the stanza-id.
        _ = try await alice.react("👍", to: original, in: room)
        let reactions = try await bob.nextMessage(within: 30, "Alice's reaction") { $0.references.reactions != nil }
        XCTAssertEqual(reactions.references.reactions, .init(id: original, keys: ["👍"]))
        XCTAssertEqual(reactions.from?.resource, "Alice")

        // Alice's message; Bob reacts, replies; Alice edits it and removes it.
        let aliceMessage = try await alice.send("tea?", to: room)
        let heard = try await bob.nextMessage(within: 30, "Alice's message") { $0.body == "tea?" }
        XCTAssertEqual(heard.stanzaIDs.first?.id.rawValue, aliceMessage)
        var reaction = MessageReferences()
        reaction.reactions = .init(id: aliceMessage, keys: ["🎉"])
        try bob.send(.message(Message(type: .groupchat, to: address, id: StanzaAttributeID("react-1"), extensions: reaction.elements)))
        let annotation = try await timelineEvent(alice, in: room, "Bob's reaction") { $0.type == "m.reaction" && $0.sender != alice.userID }
        XCTAssertEqual(annotation.raw.at("content", "m.relates_to", "event_id")?.stringValue, aliceMessage)
        XCTAssertEqual(annotation.raw.at("content", "m.relates_to", "key")?.stringValue, "🎉")
        var reply = MessageReferences()
        reply.reply = .init(to: address.with(resource: "Alice"), id: aliceMessage)
        try bob.send(.message(Message(type: .groupchat, to: address, id: StanzaAttributeID("reply-1"), body: "yes please",
                                      originID: OriginID("reply-1"), extensions: reply.elements)))
        let answered = try await timelineEvent(alice, in: room, "Bob's reply") { $0.body == "yes please" }
        XCTAssertEqual(answered.raw.at("content", "m.relates_to", "m.in_reply_to", "event_id")?.stringValue, aliceMessage)
        let aliceEdit = try await alice.edit(aliceMessage, to: "tea at five?", in: room)
        let corrected = try await bob.nextMessage(within: 30, "Alice's correction") { $0.references.replaces == aliceMessage }
        XCTAssertEqual(corrected.references.replaces, aliceMessage)
        XCTAssertEqual(corrected.body, "tea at five?")
        XCTAssertEqual(corrected.stanzaIDs.first?.id.rawValue, aliceEdit)
        _ = try await alice.redact(aliceMessage, in: room)
        let retracted = try await bob.nextMessage(within: 30, "the retraction") { $0.references.retraction != nil }
        XCTAssertEqual(retracted.references.retraction, .current(id: aliceMessage))

        // Bob retracts his own message: its event is redacted.
        var retraction = MessageReferences()
        retraction.retractions = [.current(id: original)]
        try bob.send(.message(Message(type: .groupchat, to: address, id: StanzaAttributeID("retract-1"), extensions: retraction.elements)))
        try await eventually("Bob's message redacted", timeout: 30) { try await alice.isRedacted(original, in: room) }
    }

    func testTypingAndReadMarkersBothWays() async throws {
        let world = try EndToEndHarness("gateway-rooms-signals")
        try await startGatewayBridge(world)
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let (room, address) = try await publicRoom(world, alice, "signals")
        try await alice.setDisplayname("Alice", in: room)
        let bob = try await world.xmppUser("bob")
        defer { bob.close() }
        _ = try await join(bob, address, nick: "Bob", history: 0)
        let members = try await alice.members(of: room)
        let bobsGhost = try XCTUnwrap(members.first { $0.value == "Bob" }?.key)

        // XMPP → Matrix: Bob composes (his ghost types), then stops.
        try bob.send(.message(Message(type: .groupchat, to: address, extensions: ChatSignals(chatState: .composing).elements)))
        try await eventually("Bob's ghost typing", timeout: 20) { try await alice.typingUsers(in: room).contains(bobsGhost) }
        try bob.send(.message(Message(type: .groupchat, to: address, extensions: ChatSignals(chatState: .active).elements)))
        try await eventually("Bob's ghost no longer typing", timeout: 20) { !(try await alice.typingUsers(in: room).contains(bobsGhost)) }

        // Matrix → XMPP: Alice types; Bob sees her composing. Synapse drops ephemeral events for an appservice it is
        // still retrying (after the previous test's bridge went away), so, like a client that keeps typing, she starts
        // again until one gets through (stopping in between: Synapse announces only a change).
        let composing = try await eventuallyValue("Alice composing", timeout: 60) {
            try await alice.setTyping(true, in: room)
            if let composing = try? await bob.nextMessage(within: 8, "Alice composing", where: { $0.signals.chatState == .composing }) {
                return composing
            }
            try await alice.setTyping(false, in: room)
            return nil
        }
        XCTAssertEqual(composing.from, address.with(resource: "Alice"))

        // Read markers: Bob's displayed marker on Alice's message is his ghost's read receipt on it.
        let aliceMessage = try await alice.send("read me", to: room)
        _ = try await bob.nextMessage(within: 30, "Alice's message") { $0.body == "read me" }
        try bob.send(.message(Message(type: .groupchat, to: address, extensions: ChatSignals(displayed: aliceMessage).elements)))
        try await eventually("Bob's ghost's read receipt", timeout: 20) { try await alice.readReceipt(of: bobsGhost, in: room) == aliceMessage }
        // And Alice reading Bob's message is a displayed marker from her nick (each attempt on a new message of his:
        // Synapse announces a receipt once).
        let marker: Message = try await eventuallyValue("Alice's displayed marker", timeout: 60) {
            let sent = try bob.sendGroupchat(to: address, body: "read me too \(UUID().uuidString.prefix(6))")
            let reflected = try await bob.nextMessage(within: 30, "the reflection") { $0.originID == sent.originID }
            guard let bobsEvent = reflected.stanzaIDs.first?.id.rawValue else { return nil }
            try await alice.sendReceipt(on: bobsEvent, in: room)
            return try? await bob.nextMessage(within: 8, "Alice's displayed marker", where: { $0.signals.displayed == bobsEvent })
        }
        XCTAssertEqual(marker.from, address.with(resource: "Alice"))
    }

    func testFilesBothWays() async throws {
        let files = try MediaTests.FileServer(files: ["/upload/g/photo.png": ("image/png", MediaTests.png)])
        let world = try EndToEndHarness("gateway-rooms-files")
        try await startGatewayBridge(world, extra: "\nmedia:\n  allow_private_addresses: true\n")
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let (room, address) = try await publicRoom(world, alice, "files")
        try await alice.setDisplayname("Alice", in: room)
        let bob = try await world.xmppUser("bob")
        defer { bob.close() }
        _ = try await join(bob, address, nick: "Bob", history: 0)

        // Matrix → XMPP: the image is a link the bridge serves (the body, for clients to show it), with SFS.
        let mxc = try await alice.upload(MediaTests.png, contentType: "image/png", fileName: "cat.png")
        _ = try await alice.sendEvent("m.room.message", content: ["msgtype": "m.image", "body": "cat.png", "url": mxc,
                                                                  "info": ["mimetype": "image/png", "size": MediaTests.png.count]], to: room)
        let image = try await bob.nextMessage(within: 30, "Alice's image") { $0.references.file != nil }
        let url = try XCTUnwrap(image.body)
        XCTAssertEqual(image.references.file?.url, url)
        XCTAssertEqual(image.references.file?.name, "cat.png")
        let (data, _) = try await URLSession.shared.data(from: URL(string: url)!)
        XCTAssertEqual(data, MediaTests.png, "the bridge serves the file byte-identical")

        // XMPP → Matrix: a link with OOB is fetched and uploaded; Alice gets an m.image.
        let photoURL = files.url("/upload/g/photo.png")
        _ = try bob.sendGroupchat(to: address, body: photoURL, extensions: [MediaTests.oob(photoURL)])
        let uploaded = try await timelineEvent(alice, in: room, "Bob's image") { $0.msgtype == "m.image" && $0.sender != alice.userID }
        XCTAssertEqual(uploaded.body, "photo.png")
        let uploadedMXC = try XCTUnwrap(uploaded.raw.at("content", "url")?.stringValue)
        let downloaded = try await alice.download(uploadedMXC)
        XCTAssertEqual(downloaded.data, MediaTests.png)
        await files.stop()
    }

    func testPrivateMessagesInsideTheRoom() async throws {
        let world = try EndToEndHarness("gateway-rooms-private")
        try await startGatewayBridge(world)
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let (room, address) = try await publicRoom(world, alice, "private")
        try await alice.setDisplayname("Alice", in: room)
        let bob = try await world.xmppUser("bob")
        defer { bob.close() }
        let carol = try await world.xmppUser("carol")
        defer { carol.close() }
        _ = try await join(bob, address, nick: "Bob", history: 0)
        _ = try await join(carol, address, nick: "Carol", history: 0)

        // To an XMPP occupant: passed on from the sender's occupant JID.
        try bob.send(.message(Message(type: .chat, to: address.with(resource: "Carol"), id: StanzaAttributeID("pm-1"), body: "psst")))
        let toCarol = try await carol.nextMessage(within: 30, "Bob's private message") { $0.type == .chat && $0.body == "psst" }
        XCTAssertEqual(toCarol.from, address.with(resource: "Bob"))

        // To a Matrix member: Bob's ghost invites Alice to a direct chat and writes there; her answer comes back.
        try bob.send(.message(Message(type: .chat, to: address.with(resource: "Alice"), id: StanzaAttributeID("pm-2"), body: "hello Alice")))
        let invitation = try await eventuallyValue("Alice invited to a direct chat", timeout: 30) {
            try await alice.invitations().first { $0.isDirect }
        }
        try await alice.join(invitation.room)
        let said = try await world.matrixMessages(alice, in: invitation.room, untilBody: "hello Alice", excluding: alice.userID)
        XCTAssertEqual(said.map(\.body), ["hello Alice"])
        try await alice.send("hello Bob", to: invitation.room)
        let answer = try await bob.nextMessage(within: 30, "Alice's private answer") { $0.type == .chat && $0.body == "hello Bob" }
        XCTAssertEqual(answer.from, address.with(resource: "Alice"))
        // The next one goes to the same direct chat.
        try bob.send(.message(Message(type: .chat, to: address.with(resource: "Alice"), id: StanzaAttributeID("pm-3"), body: "again")))
        let again = try await world.matrixMessages(alice, in: invitation.room, untilBody: "again", excluding: alice.userID)
        XCTAssertEqual(again.map(\.body), ["hello Alice", "again"])
        // Nobody by that nick: item-not-found.
        try bob.send(.message(Message(type: .chat, to: address.with(resource: "Nobody"), id: StanzaAttributeID("pm-4"), body: "hm")))
        let refusal = try await bob.nextMessage(within: 30, "the refusal") { $0.type == .error && $0.id == StanzaAttributeID("pm-4") }
        XCTAssertEqual(refusal.error?.condition, .itemNotFound)
    }
}
