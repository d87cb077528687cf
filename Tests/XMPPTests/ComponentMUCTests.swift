import Foundation
import IsthmusCommon
import TestSupport
import Testing
import XMPPComponent

/// MUC and MAM operations of the component against a scripted room (tier 2).
@Suite struct ComponentMUCTests {
    let room = JID("room@conference.localhost")!
    let alice = JID("alice_matrix@bridge.localhost/isthmus")!
    let bot = JID("bot@bridge.localhost/isthmus")!

    func presence(_ xml: String) -> XElement { TestXML.element(xml) }

    @Test func joinThatCreatesTheRoomTurnsItsArchiveOnBeforeReportingJoined() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.acceptNext()
        async let outcome = fixture.connection.join(room: room, nick: "Alice", occupant: alice)

        let join = try Presence(element: try await session.receiveElement())
        #expect(join.from == alice && join.to == JID("room@conference.localhost/Alice"))
        #expect(join.mucJoin == MUCJoinRequest(history: MUCHistoryRequest.none))
        // Another occupant's presence to us is not the answer: it goes to the bridge.
        try session.send("<presence from='room@conference.localhost/Bob' to='\(alice)'><x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='none' role='participant'/></x></presence>")
        try session.send("""
            <presence from='room@conference.localhost/Alice' to='\(alice)'><x xmlns='http://jabber.org/protocol/muc#user'>\
            <item affiliation='owner' role='moderator'/><status code='110'/><status code='201'/></x></presence>
            """)
        // The configuration form is asked for; this one (Prosody's mod_muc_mam) has a switch for the archive.
        let ask = try IQ(element: try await session.receiveElement())
        #expect(ask.type == .get && ask.to == room && ask.from == alice && ask.payload == .mucOwner(nil))
        try session.send("""
            <iq type='result' id='\(ask.id.rawValue)' from='\(room)' to='\(alice)'><query xmlns='http://jabber.org/protocol/muc#owner'>\
            <x xmlns='jabber:x:data' type='form'><field var='FORM_TYPE' type='hidden'><value>http://jabber.org/protocol/muc#roomconfig</value></field>\
            <field var='muc#roomconfig_persistentroom' type='boolean'><value>1</value></field>\
            <field var='muc#roomconfig_enablearchiving' type='boolean'><value>0</value></field></x></query></iq>
            """)
        let configure = try IQ(element: try await session.receiveElement())
        #expect(configure.type == .set && configure.to == room && configure.from == alice)
        #expect(configure.payload == .mucOwner(DataForm(type: "submit", fields: [
            .init("FORM_TYPE", type: "hidden", values: ["http://jabber.org/protocol/muc#roomconfig"]),
            .init("muc#roomconfig_enablearchiving", values: ["1"]),
        ])))
        try session.send(configure.result().element)

        guard case .joined(let selfPresence) = try await outcome else { throw TestFailure("not joined") }
        #expect(selfPresence.createdRoom && selfPresence.nick == "Alice" && selfPresence.affiliation == .owner)
        guard case .presence(let bob) = try await fixture.nextStanza() else { throw TestFailure("Bob's presence not delivered") }
        #expect(bob.from == JID("room@conference.localhost/Bob"))
        await fixture.stop()
    }

    /// Issue 26: with a primary occupant (the bot), the room's copies of presences for our other occupants stop at
    /// their addresses, type and status codes, unless they may answer a request of that occupant in that room: its
    /// answer still arrives. The bot's copies, presences to a room the component hosts (gateway mode) and messages to
    /// anyone still reach the reader.
    @Test func presenceCopiesForOtherOccupantsStopEarlyUnlessARequestWaits() async throws {
        let fixture = try ComponentFixture(primaryOccupant: bot)
        let session = try await fixture.acceptNext()
        try session.send("<presence from='room@conference.localhost/Bob' to='\(alice)'/>")   // a copy for Alice: dropped
        try session.send("<presence from='room@conference.localhost/Bob' to='\(bot)'/>")     // the bot's copy
        guard case .presence(let first) = try await fixture.nextStanza() else { throw TestFailure("no presence delivered") }
        #expect(first.to == bot, "Alice's copy came before the bot's: it was not dropped")

        async let outcome = fixture.connection.join(room: room, nick: "Alice", occupant: alice)
        _ = try await session.receiveElement()
        // While Alice's join waits, the occupant list sent to her cannot answer it (not from her nick, no status 110):
        // still dropped. Her self-presence (status 110, under the nick the room gave her) answers the join.
        try session.send("<presence from='room@conference.localhost/Carol' to='\(alice)'/>")
        try session.send("""
            <presence from='room@conference.localhost/Alice2' to='\(alice)'><x xmlns='http://jabber.org/protocol/muc#user'>\
            <item affiliation='none' role='participant'/><status code='110'/></x></presence>
            """)
        guard case .joined(let joined) = try await outcome else { throw TestFailure("Alice's join got no answer") }
        #expect(joined.nick == "Alice2")
        // A room that sends no status 110: the presence from the nick asked for answers, as before.
        async let second = fixture.connection.join(room: JID("other@conference.localhost")!, nick: "Alice", occupant: alice)
        _ = try await session.receiveElement()
        try session.send("<presence from='other@conference.localhost/Bob' to='\(alice)'/>")
        try session.send("<presence from='other@conference.localhost/Alice' to='\(alice)'/>")
        guard case .joined = try await second else { throw TestFailure("the join without status 110 got no answer") }
        try session.send("<presence from='room@conference.localhost/Carol' to='\(bot)'/>")
        guard case .presence(let carol) = try await fixture.nextStanza() else { throw TestFailure("no presence delivered") }
        #expect(carol.to == bot, "a copy for Alice reached the reader")

        try session.send("<presence from='room@conference.localhost/Dave' to='\(alice)'/>")   // joined: dropped again
        try session.send("<presence from='romeo@localhost/phone' to='#lounge@bridge.localhost/Romeo'/>")   // a hosted room
        try session.send("<message type='groupchat' from='room@conference.localhost/Bob' to='\(alice)'><body>hi</body></message>")
        guard case .presence(let hosted) = try await fixture.nextStanza() else { throw TestFailure("the hosted room's presence was dropped") }
        #expect(hosted.to == JID("#lounge@bridge.localhost/Romeo"))
        guard case .message(let message) = try await fixture.nextStanza() else { throw TestFailure("the message was dropped") }
        #expect(message.to == alice)
        await fixture.stop()
    }

    @Test func aCreatedRoomWithoutAnArchiveSwitchGetsTheInstantForm() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.acceptNext()
        async let outcome = fixture.connection.join(room: room, nick: "Alice", occupant: alice)
        _ = try await session.receiveElement()
        try session.send("""
            <presence from='room@conference.localhost/Alice' to='\(alice)'><x xmlns='http://jabber.org/protocol/muc#user'>\
            <item affiliation='owner' role='moderator'/><status code='110'/><status code='201'/></x></presence>
            """)
        let ask = try IQ(element: try await session.receiveElement())
        #expect(ask.type == .get && ask.payload == .mucOwner(nil))
        try session.send("""
            <iq type='error' id='\(ask.id.rawValue)' from='\(room)' to='\(alice)'>\
            <error type='cancel'><feature-not-implemented xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>
            """)
        let configure = try IQ(element: try await session.receiveElement())
        #expect(configure.type == .set && configure.payload == .mucOwner(DataForm(type: "submit")))
        try session.send(configure.result().element)
        guard case .joined = try await outcome else { throw TestFailure("not joined") }
        await fixture.stop()
    }

    @Test func theArchiveSwitchIsSetOnlyWhereTheFormOffersIt() {
        let ejabberd = DataForm(type: "form", fields: [.init("mam", type: "boolean", values: ["0"])])
        #expect(CreatedRoomConfiguration.submission(offered: ejabberd).fields.map(\.name) == ["FORM_TYPE", "mam"])
        let none = DataForm(type: "form", fields: [.init("muc#roomconfig_persistentroom", type: "boolean", values: ["1"])])
        #expect(CreatedRoomConfiguration.submission(offered: none) == DataForm(type: "submit"))
        #expect(CreatedRoomConfiguration.submission(offered: nil) == DataForm(type: "submit"))
    }

    @Test func nickConflictAndRefusalsAreOutcomes() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.acceptNext()
        for (condition, expected) in [
            ("conflict", JoinOutcome.nickConflict),
            ("registration-required", .notAllowed(StanzaError(type: .auth, condition: .registrationRequired))),
        ] {
            async let outcome = fixture.connection.join(room: room, nick: "Alice", occupant: alice)
            _ = try await session.receiveElement()
            try session.send("""
                <presence type='error' from='room@conference.localhost/Alice' to='\(alice)'>\
                <error type='\(condition == "conflict" ? "cancel" : "auth")'><\(condition) xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></presence>
                """)
            #expect(try await outcome == expected)
        }
        await fixture.stop()
    }

    @Test func aSecondJoinForTheSameOccupantAndRoomWaitsItsTurn() async throws {
        let fixture = try ComponentFixture(requestTimeout: .milliseconds(300))
        let session = try await fixture.acceptNext()
        // The first join must still be waiting when the second comes, even on a loaded machine: its own long timeout.
        async let first = fixture.connection.join(room: room, nick: "Alice", occupant: alice, timeout: .seconds(30))
        _ = try await session.receiveElement()
        await #expect(throws: XMPPRequestError.requestInProgress("join of room@conference.localhost/Alice by \(alice)")) {
            _ = try await fixture.connection.join(room: room, nick: "Alice", occupant: alice)
        }
        await fixture.stop()   // ends the first join too
        _ = try? await first
    }

    @Test func nickChangeWaitsForTheNewNicksSelfPresence() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.acceptNext()
        async let outcome = fixture.connection.changeNick(room: room, to: "Alicia", occupant: alice)
        let request = try Presence(element: try await session.receiveElement())
        #expect(request.to == JID("room@conference.localhost/Alicia") && request.mucJoin == nil)
        try session.send("""
            <presence type='unavailable' from='room@conference.localhost/Alice' to='\(alice)'><x xmlns='http://jabber.org/protocol/muc#user'>\
            <item nick='Alicia'/><status code='303'/><status code='110'/></x></presence>
            """)
        try session.send("<presence from='room@conference.localhost/Alicia' to='\(alice)'><x xmlns='http://jabber.org/protocol/muc#user'><status code='110'/></x></presence>")
        guard case .changed(let changed) = try await outcome else { throw TestFailure("nick not changed") }
        #expect(changed.nick == "Alicia")
        // The 303 step itself reaches the bridge (it mirrors nick changes of everyone alike).
        guard case .presence(let step) = try await fixture.nextStanza() else { throw TestFailure("303 not delivered") }
        #expect(step.statusCodes.contains(.nickChanged))
        await fixture.stop()
    }

    @Test func leaveIsConfirmedOrUnconfirmed() async throws {
        let fixture = try ComponentFixture(requestTimeout: .milliseconds(200))
        let session = try await fixture.acceptNext()
        // The confirmed leave gets a generous timeout (a loaded machine); the unconfirmed one the fixture's 200 ms.
        async let left = fixture.connection.leave(room: room, nick: "Alice", occupant: alice, timeout: .seconds(10))
        #expect(try Presence(element: try await session.receiveElement()).type == .unavailable)
        try session.send("<presence type='unavailable' from='room@conference.localhost/Alice' to='\(alice)'><x xmlns='http://jabber.org/protocol/muc#user'><status code='110'/></x></presence>")
        guard case .left = try await left else { throw TestFailure("leave not confirmed") }
        #expect(try await fixture.connection.leave(room: room, nick: "Alice", occupant: alice) == .unconfirmed)
        await fixture.stop()
    }

    @Test func groupchatCarriesOriginIDAndTheExactBody() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.acceptNext()
        let body = "<b>bold</b> & 'quotes' \"double\"\r\n\ttab ]]> 😀"
        let sent = try await fixture.connection.sendGroupchat(from: alice, room: room, body: body, originID: OriginID("o-1"))
        let received = try Message(element: try await session.receiveElement())
        #expect(received == sent)
        #expect(received.body == body && received.originID == OriginID("o-1") && received.id == StanzaAttributeID("o-1"))
        #expect(received.type == .groupchat && received.to == room)
        let whisper = try await fixture.connection.sendGroupchat(
            from: alice, room: JID("room@conference.localhost/Bob")!, body: "psst", type: .chat)
        let privateMessage = try Message(element: try await session.receiveElement())
        #expect(privateMessage == whisper && privateMessage.type == .chat && privateMessage.to == JID("room@conference.localhost/Bob"))
        await fixture.stop()
    }

    @Test func selfPingClassifiesTheAnswer() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.acceptNext()
        async let outcome = fixture.connection.selfPing(room: room, nick: "Alice", occupant: alice)
        let ping = try IQ(element: try await session.receiveElement())
        #expect(ping.to == JID("room@conference.localhost/Alice") && ping.from == alice && ping.payload == .ping)
        try session.send(ping.errorResponse(StanzaError(type: .cancel, condition: .notAcceptable)).element)
        #expect(try await outcome == .notJoined(StanzaError(type: .cancel, condition: .notAcceptable)))
        await fixture.stop()
    }

    /// Answers the disco#info that a query after a stanza id starts with, announcing `features`.
    private func answerDisco(_ session: FakeXMPPSession, features: [String]) async throws {
        let disco = try IQ(element: try await session.receiveElement())
        guard case .discoInfo? = disco.payload else { throw TestFailure("not a disco#info request: \(disco.element)") }
        #expect(disco.to == room && disco.from == bot && disco.type == .get)
        try session.send(disco.result(payload: .discoInfo(DiscoInfo(features: features))).element)
    }

    /// The archive's answer to `query`: the message `body` from carol with the archive id `id`.
    func result(_ query: IQ, _ id: String, _ body: String) -> String {
        guard case .mamQuery(let mam)? = query.payload else { return "" }
        return """
            <message to='\(bot)' from='room@conference.localhost'><result xmlns='urn:xmpp:mam:2' queryid='\(mam.queryID ?? "")' id='\(id)'>\
            <forwarded xmlns='urn:xmpp:forward:0'><delay xmlns='urn:xmpp:delay' stamp='2026-11-29T10:00:00Z'/>\
            <message xmlns='jabber:client' from='room@conference.localhost/carol' type='groupchat'><body>\(body)</body></message>\
            </forwarded></result></message>
            """
    }

    @Test func mamQueryPagesUntilCompleteAndKeepsLiveTrafficSeparate() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.acceptNext()
        async let archive = fixture.connection.mamQuery(room: room, as: bot, after: StanzaID("S1"), pageSize: 2)
        try await answerDisco(session, features: [XMPPNamespace.mam, XMPPNamespace.mamExtended])

        let first = try IQ(element: try await session.receiveElement())
        guard case .mamQuery(let query)? = first.payload else { throw TestFailure("not a MAM query") }
        #expect(first.to == room && first.from == bot && query.afterID == StanzaID("S1") && query.rsm == RSMSet(max: 2))
        #expect(query.start == nil)
        try session.send(result(first, "S2", "two"))
        try session.send("<message from='room@conference.localhost/dave' to='\(bot)' type='groupchat'><body>live</body></message>")
        try session.send(result(first, "S3", "three"))
        try session.send(first.result(payload: .mamFin(MAMFin(complete: false, rsm: RSMSet(first: "S2", last: "S3")))).element)

        let second = try IQ(element: try await session.receiveElement())
        guard case .mamQuery(let next)? = second.payload else { throw TestFailure("no second page") }
        #expect(next.afterID == StanzaID("S1") && next.rsm == RSMSet(max: 2, after: "S3"))
        try session.send(result(second, "S4", "four"))
        try session.send(second.result(payload: .mamFin(MAMFin(complete: true, rsm: RSMSet(first: "S4", last: "S4")))).element)

        let messages = try await archive
        #expect(messages.map(\.id) == [StanzaID("S2"), StanzaID("S3"), StanzaID("S4")])
        #expect(messages.map(\.message.body) == ["two", "three", "four"])
        #expect(messages.allSatisfy { $0.message.stanzaID(by: room) == $0.id && $0.message.delay != nil })
        guard case .message(let live) = try await fixture.nextStanza() else { throw TestFailure("live message lost") }
        #expect(live.body == "live")
        await fixture.stop()
    }

    /// ejabberd 23.01: MAM without `urn:xmpp:mam:2#extended` refuses `after-id`; the id is the first page's RSM
    /// `<after>` instead, and later pages go on from each page's last id.
    @Test func mamQueryWithoutTheExtendedFeaturePagesAfterTheIDWithRSM() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.acceptNext()
        async let archive = fixture.connection.mamQuery(room: room, as: bot, after: StanzaID("S1"), pageSize: 1)
        try await answerDisco(session, features: [XMPPNamespace.mam, XMPPNamespace.stanzaID])

        let first = try IQ(element: try await session.receiveElement())
        guard case .mamQuery(let query)? = first.payload else { throw TestFailure("not a MAM query") }
        #expect(query.afterID == nil && query.start == nil && query.rsm == RSMSet(max: 1, after: "S1"))
        try session.send(result(first, "S2", "two"))
        try session.send(first.result(payload: .mamFin(MAMFin(complete: false, rsm: RSMSet(first: "S2", last: "S2")))).element)

        let second = try IQ(element: try await session.receiveElement())
        guard case .mamQuery(let next)? = second.payload else { throw TestFailure("no second page") }
        #expect(next.afterID == nil && next.rsm == RSMSet(max: 1, after: "S2"))
        try session.send(result(second, "S3", "three"))
        try session.send(second.result(payload: .mamFin(MAMFin(complete: true, rsm: RSMSet(first: "S3", last: "S3")))).element)

        let messages = try await archive
        #expect(messages.map(\.id) == [StanzaID("S2"), StanzaID("S3")])
        #expect(messages.map(\.message.body) == ["two", "three"])
        await fixture.stop()
    }

    @Test func mamQueryByTimeAsksNoDisco() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.acceptNext()
        let since = Date(timeIntervalSince1970: 1_800_000_000)
        async let archive = fixture.connection.mamQuery(room: room, as: bot, since: since)
        let first = try IQ(element: try await session.receiveElement())
        guard case .mamQuery(let query)? = first.payload else { throw TestFailure("not a MAM query: \(first.element)") }
        #expect(query.start == since && query.afterID == nil && query.rsm == RSMSet(max: 100))
        try session.send(first.result(payload: .mamFin(MAMFin(complete: true, rsm: nil))).element)
        #expect(try await archive == [])
        await fixture.stop()
    }

    @Test func mamQueryErrorIsThrown() async throws {
        let fixture = try ComponentFixture()
        let session = try await fixture.acceptNext()
        async let archive = fixture.connection.mamQuery(room: room, as: bot, after: StanzaID("unknown"))
        try await answerDisco(session, features: [XMPPNamespace.mam, XMPPNamespace.mamExtended])
        let query = try IQ(element: try await session.receiveElement())
        try session.send(query.errorResponse(StanzaError(type: .cancel, condition: .itemNotFound)).element)
        let result: Result<[ArchivedMessage], any Error>
        do { result = .success(try await archive) } catch { result = .failure(error) }
        #expect(throws: XMPPRequestError.requestFailed(StanzaError(type: .cancel, condition: .itemNotFound))) { try result.get() }
        await fixture.stop()
    }
}
