import Foundation
import IsthmusCommon
import TestSupport
import Testing
import XMLStream
import XMPP

/// XEP-0313 queries, results and fins.
@Suite struct MAMModelTests {
    @Test func queryWritesFormAndPaging() throws {
        let query = MAMQuery(queryID: "q1", afterID: StanzaID("S5"), rsm: RSMSet(max: 50))
        #expect(XMLSerializer.string(of: query.element, defaultNamespace: XMPPNamespace.component) == "<query xmlns='urn:xmpp:mam:2' queryid='q1'>"
            + "<x xmlns='jabber:x:data' type='submit'><field var='FORM_TYPE' type='hidden'><value>urn:xmpp:mam:2</value></field>"
            + "<field var='after-id'><value>S5</value></field></x>"
            + "<set xmlns='http://jabber.org/protocol/rsm'><max>50</max></set></query>")
        #expect(try MAMQuery(element: query.element) == query)
        let bySince = MAMQuery(start: Date(timeIntervalSince1970: 60))
        #expect(try MAMQuery(element: bySince.element).start == Date(timeIntervalSince1970: 60))
    }

    @Test func resultBecomesAnArchivedMessageWithDelayAndStanzaID() throws {
        let envelope = try Message(element: TestXML.element("""
            <message to='bot@bridge.localhost/r' from='room@conference.localhost'>\
            <result xmlns='urn:xmpp:mam:2' queryid='q1' id='S7'>\
            <forwarded xmlns='urn:xmpp:forward:0'><delay xmlns='urn:xmpp:delay' stamp='2026-11-29T10:00:00Z'/>\
            <message xmlns='jabber:client' from='room@conference.localhost/alice' type='groupchat' id='o7'>\
            <body>archived</body><origin-id xmlns='urn:xmpp:sid:0' id='o7'/><occupant-id xmlns='urn:xmpp:occupant-id:0' id='oc'/>\
            </message></forwarded></result></message>
            """))
        let archived = try #require(try ArchivedMessage(envelope: envelope))
        let room = JID("room@conference.localhost")!
        #expect(archived.id == StanzaID("S7"))
        #expect(archived.queryID == "q1")
        #expect(archived.archive == room)
        #expect(archived.message.body == "archived")
        #expect(archived.message.from == JID("room@conference.localhost/alice"))
        #expect(archived.message.stanzaID(by: room) == StanzaID("S7"))
        #expect(archived.message.originID == OriginID("o7"))
        #expect(archived.message.occupantID == OccupantID("oc"))
        #expect(archived.message.delay?.stamp == XMPPDateTime.parse("2026-11-29T10:00:00Z"))
        #expect(try ArchivedMessage(envelope: Message(body: "live")) == nil)
    }

    @Test func finReadsCompletenessAndPage() throws {
        let iq = try IQ(element: TestXML.element("""
            <iq type='result' id='q'><fin xmlns='urn:xmpp:mam:2' complete='true'>\
            <set xmlns='http://jabber.org/protocol/rsm'><first index='0'>A</first><last>B</last><count>2</count></set></fin></iq>
            """))
        #expect(iq.payload == .mamFin(MAMFin(complete: true, rsm: RSMSet(first: "A", last: "B", count: 2))))
        let incomplete = try IQ(element: TestXML.element("<iq type='result' id='q'><fin xmlns='urn:xmpp:mam:2'/></iq>"))
        #expect(incomplete.payload == .mamFin(MAMFin(complete: false)))
    }
}
