import Foundation
import IsthmusCommon
import TestSupport
import Testing
import XMLStream
import XMPP

/// Reading and writing stanzas: every typed field, and unknown extensions preserved.
@Suite struct StanzaModelTests {
    @Test func groupchatReflectionReadsEveryField() throws {
        let element = TestXML.element("""
            <message from='room@conference.localhost/alice' to='bob_matrix@bridge.localhost/x' type='groupchat' id='o-1'>\
            <body>Hi &amp; &lt;bye&gt;</body>\
            <stanza-id xmlns='urn:xmpp:sid:0' id='S1' by='room@conference.localhost'/>\
            <stanza-id xmlns='urn:xmpp:sid:0' id='FAKE' by='evil@example.org'/>\
            <origin-id xmlns='urn:xmpp:sid:0' id='o-1'/>\
            <occupant-id xmlns='urn:xmpp:occupant-id:0' id='occ-A'/>\
            <reply xmlns='urn:xmpp:reply:0' to='room@conference.localhost/carol' id='S0'/>\
            </message>
            """)
        let message = try Message(element: element)
        #expect(message.type == .groupchat)
        #expect(message.from == JID("room@conference.localhost/alice"))
        #expect(message.id == StanzaAttributeID("o-1"))
        #expect(message.body == "Hi & <bye>")
        #expect(message.stanzaID(by: JID("room@conference.localhost")!) == StanzaID("S1"))
        #expect(message.stanzaIDs.count == 2)
        #expect(message.originID == OriginID("o-1"))
        #expect(message.occupantID == OccupantID("occ-A"))
        #expect(message.extensions.map(\.name) == ["reply"])
        // Written and read again, nothing is lost.
        #expect(try Message(element: TestXML.element(XMLSerializer.string(of: message.element))) == message)
    }

    @Test func delaySubjectAndErrorAreRead() throws {
        let message = try Message(element: TestXML.element("""
            <message from='room@conference.localhost' type='error' id='x'><subject></subject>\
            <delay xmlns='urn:xmpp:delay' stamp='2026-11-29T12:34:56.789Z' from='room@conference.localhost'/>\
            <error type='modify'><not-acceptable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>\
            <text xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'>You are not in the room</text></error></message>
            """))
        #expect(message.subject == "")
        #expect(message.delay?.stamp == XMPPDateTime.parse("2026-11-29T12:34:56.789Z"))
        #expect(message.error == StanzaError(type: .modify, condition: .notAcceptable, text: "You are not in the room"))
        #expect(message.isNotJoinedBounce)
        #expect(!Message(type: .groupchat, body: "x").isNotJoinedBounce)
    }

    @Test func malformedKnownExtensionsAreKeptNotFatal() throws {
        let message = try Message(element: TestXML.element(
            "<message><delay xmlns='urn:xmpp:delay' stamp='yesterday'/><stanza-id xmlns='urn:xmpp:sid:0' id='x'/></message>"))
        #expect(message.delay == nil)
        #expect(message.extensions.count == 2)
    }

    @Test func badAddressFailsTheStanza() {
        #expect(throws: StanzaParseError.self) { try Message(element: TestXML.element("<message from='a@b@c'/>")) }
        #expect(throws: StanzaParseError.self) { try IQ(element: TestXML.element("<iq type='get'/>")) }
        #expect(throws: StanzaParseError.self) { try Presence(element: TestXML.element("<presence type='bogus'/>")) }
    }

    @Test func mucPresenceReadsItemsStatusCodesAndOccupantID() throws {
        let presence = try Presence(element: TestXML.element("""
            <presence from='room@conference.localhost/alice' to='alice_matrix@bridge.localhost/r'>\
            <x xmlns='http://jabber.org/protocol/muc#user'>\
            <item affiliation='owner' role='moderator' jid='alice_matrix@bridge.localhost/r'/>\
            <status code='110'/><status code='201'/><status code='100'/></x>\
            <occupant-id xmlns='urn:xmpp:occupant-id:0' id='occ'/></presence>
            """))
        #expect(presence.type == .available)
        #expect(presence.statusCodes == [.selfPresence, .roomCreated, .nonAnonymous])
        #expect(presence.mucUser?.item == MUCItem(affiliation: .owner, role: .moderator, jid: JID("alice_matrix@bridge.localhost/r")))
        #expect(presence.occupantID == OccupantID("occ"))
        #expect(try Presence(element: TestXML.element(XMLSerializer.string(of: presence.element))) == presence)
    }

    @Test func joinPresenceWritesHistoryRequest() {
        let join = Presence(
            from: JID("a@bridge.localhost/r"), to: JID("room@conference.localhost/Alice"),
            mucJoin: MUCJoinRequest(history: MUCHistoryRequest.none))
        #expect(XMLSerializer.string(of: join.element) == "<presence from='a@bridge.localhost/r' to='room@conference.localhost/Alice'>"
            + "<x xmlns='http://jabber.org/protocol/muc'><history maxstanzas='0'/></x></presence>")
        let since = MUCJoinRequest(history: .since(Date(timeIntervalSince1970: 0)))
        #expect(XMLSerializer.string(of: since.element).contains("since='1970-01-01T00:00:00.000Z'"))
    }

    @Test func iqPayloadsAreTyped() throws {
        let ping = try IQ(element: TestXML.element("<iq type='get' id='p1' from='localhost' to='bridge.localhost'><ping xmlns='urn:xmpp:ping'/></iq>"))
        #expect(ping.payload == .ping)
        #expect(ping.result() == IQ(type: .result, from: JID("bridge.localhost"), to: JID("localhost"), id: ping.id))

        let disco = try IQ(element: TestXML.element("""
            <iq type='result' id='d1'><query xmlns='http://jabber.org/protocol/disco#info'>\
            <identity category='conference' type='text' name='Room'/>\
            <feature var='urn:xmpp:mam:2'/><feature var='urn:xmpp:mam:2#extended'/><feature var='urn:xmpp:sid:0'/>\
            <feature var='urn:xmpp:occupant-id:0'/></query></iq>
            """))
        guard case .discoInfo(let info) = disco.payload else {
            Issue.record("not disco: \(String(describing: disco.payload))")
            return
        }
        #expect(info.supportsMAM && info.supportsMAMExtended && info.supportsStableIDs && info.supportsOccupantID)
        #expect(!info.supportsSelfPingOptimization)
        #expect(info.identities == [DiscoInfo.Identity(category: "conference", type: "text", name: "Room")])

        let unknown = try IQ(element: TestXML.element("<iq type='set' id='u'><vCard xmlns='vcard-temp'><FN>A</FN></vCard></iq>"))
        guard case .other(let raw) = unknown.payload else {
            Issue.record("unknown payload not kept raw")
            return
        }
        #expect(raw.child("FN", namespace: "vcard-temp")?.text == "A")
    }

    @Test func instantRoomFormIsAnEmptySubmitForm() {
        let iq = IQ(type: .set, from: JID("a@bridge.localhost"), to: JID("room@conference.localhost"),
                    id: StanzaAttributeID("c1")!, payload: .mucOwner(DataForm(type: "submit")))
        #expect(XMLSerializer.string(of: iq.element) == "<iq type='set' from='a@bridge.localhost' to='room@conference.localhost' id='c1'>"
            + "<query xmlns='http://jabber.org/protocol/muc#owner'><x xmlns='jabber:x:data' type='submit'/></query></iq>")
    }

    @Test func streamErrorsMapToTypedComponentErrors() throws {
        func error(_ condition: String) throws -> ComponentError {
            let element = TestXML.element("<stream:error><\(condition) xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error>")
            return ComponentError(streamError: try StreamError(element: element))
        }
        #expect(try error("not-authorized") == .notAuthorized)
        #expect(try error("conflict") == .conflict)
        #expect(try error("invalid-from") == .invalidFrom(nil))
        #expect(try error("host-unknown") == .hostUnknown(nil))
        #expect(try error("system-shutdown") == .streamError(StreamError(condition: .systemShutdown)))
    }

    @Test func dateTimesParseAndFormat() {
        #expect(XMPPDateTime.parse("1970-01-01T00:00:00Z") == Date(timeIntervalSince1970: 0))
        #expect(XMPPDateTime.parse("2000-03-01T01:00:00+01:00") == XMPPDateTime.parse("2000-03-01T00:00:00Z"))
        #expect(XMPPDateTime.parse("2026-11-29T12:00:00.5Z")?.timeIntervalSince1970 == 1_795_953_600.5)
        #expect(XMPPDateTime.format(Date(timeIntervalSince1970: 1_795_953_600.25)) == "2026-11-29T12:00:00.250Z")
        #expect(XMPPDateTime.parse("2026-13-01T00:00:00Z") == nil)
        #expect(XMPPDateTime.parse("2026-11-29 12:00:00Z") == nil)
        #expect(XMPPDateTime.parse("2026-11-29T12:00:00") == nil)
    }
}
