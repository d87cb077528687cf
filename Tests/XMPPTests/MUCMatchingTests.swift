import IsthmusCommon
import TestSupport
import Testing
import XMPP

/// Which presences answer an occupant's join, nick change or leave, and what self-pings mean.
@Suite struct MUCMatchingTests {
    let room = JID("room@conference.localhost")!
    let occupant = JID("alice_matrix@bridge.localhost/isthmus")!
    var matcher: OccupantPresenceMatcher { OccupantPresenceMatcher(room: room, nick: "Alice", occupant: occupant)! }

    func presence(_ xml: String) -> Presence { try! Presence(element: TestXML.element(xml)) }

    @Test func selfPresenceWithStatus110Matches() {
        let match = matcher.match(presence("""
            <presence from='room@conference.localhost/Alice' to='alice_matrix@bridge.localhost/isthmus'>\
            <x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='owner' role='moderator'/>\
            <status code='110'/><status code='201'/></x></presence>
            """))
        guard case .available(let selfPresence)? = match else {
            Issue.record("no match: \(String(describing: match))")
            return
        }
        #expect(selfPresence.createdRoom)
        #expect(selfPresence.nick == "Alice")
        #expect(selfPresence.affiliation == .owner)
    }

    @Test func serviceAssignedNickMatchesThrough110() {
        let match = matcher.match(presence("""
            <presence from='room@conference.localhost/Alice (2)' to='alice_matrix@bridge.localhost/isthmus'>\
            <x xmlns='http://jabber.org/protocol/muc#user'><status code='110'/><status code='210'/></x></presence>
            """))
        guard case .available(let selfPresence)? = match else {
            Issue.record("no match")
            return
        }
        #expect(selfPresence.nick == "Alice (2)")
        #expect(selfPresence.nickAssignedByService)
    }

    @Test func otherOccupantsAndOtherRecipientsDoNotMatch() {
        // Another occupant's presence, sent to us.
        #expect(matcher.match(presence(
            "<presence from='room@conference.localhost/Bob' to='alice_matrix@bridge.localhost/isthmus'/>")) == nil)
        // Our own presence, but delivered to another occupant under the component.
        #expect(matcher.match(presence(
            "<presence from='room@conference.localhost/Alice' to='bob_matrix@bridge.localhost/isthmus'/>")) == nil)
        // Another room.
        #expect(matcher.match(presence(
            "<presence from='other@conference.localhost/Alice' to='alice_matrix@bridge.localhost/isthmus'/>")) == nil)
    }

    @Test func conflictErrorMatches() {
        let match = matcher.match(presence("""
            <presence type='error' from='room@conference.localhost/Alice' to='alice_matrix@bridge.localhost/isthmus'>\
            <error type='cancel'><conflict xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></presence>
            """))
        #expect(match == .error(StanzaError(type: .cancel, condition: .conflict)))
    }

    @Test func nickChangeUnavailableIsAStepNotAnAnswer() {
        let matcher = OccupantPresenceMatcher(room: room, nick: "Alicia", occupant: occupant)!
        #expect(matcher.match(presence("""
            <presence type='unavailable' from='room@conference.localhost/Alice' to='alice_matrix@bridge.localhost/isthmus'>\
            <x xmlns='http://jabber.org/protocol/muc#user'><item nick='Alicia'/><status code='303'/><status code='110'/></x></presence>
            """)) == nil)
        guard case .available(let changed)? = matcher.match(presence("""
            <presence from='room@conference.localhost/Alicia' to='alice_matrix@bridge.localhost/isthmus'>\
            <x xmlns='http://jabber.org/protocol/muc#user'><status code='110'/></x></presence>
            """)) else {
            Issue.record("new nick's presence did not match")
            return
        }
        #expect(changed.nick == "Alicia")
    }

    @Test func kickIsAnUnavailableSelfPresence() {
        guard case .unavailable(let gone)? = matcher.match(presence("""
            <presence type='unavailable' from='room@conference.localhost/Alice' to='alice_matrix@bridge.localhost/isthmus'>\
            <x xmlns='http://jabber.org/protocol/muc#user'><item role='none'/><status code='307'/><status code='110'/></x></presence>
            """)) else {
            Issue.record("kick did not match")
            return
        }
        #expect(gone.statusCodes.contains(.kicked))
    }

    @Test func selfPingOutcomesFollowXEP0410() {
        func outcome(_ condition: StanzaErrorCondition) -> SelfPingOutcome {
            SelfPingOutcome(response: IQ(type: .error, id: StanzaAttributeID("p")!, error: StanzaError(type: .cancel, condition: condition)))
        }
        #expect(SelfPingOutcome(response: IQ(type: .result, id: StanzaAttributeID("p")!)) == .joined)
        #expect(outcome(.serviceUnavailable) == .joined)
        #expect(outcome(.featureNotImplemented) == .joined)
        #expect(outcome(.itemNotFound) == .nickChanged)
        #expect(outcome(.notAcceptable) == .notJoined(StanzaError(type: .cancel, condition: .notAcceptable)))
        #expect(outcome(.remoteServerTimeout) == .inconclusive)
        #expect(SelfPingOutcome(response: nil) == .inconclusive)
    }
}
