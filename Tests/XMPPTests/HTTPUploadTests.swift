import IsthmusCommon
import TestSupport
import Testing
import XMLStream
import XMPP

/// XEP-0363 HTTP File Upload: service discovery, the slot request and the slot (RICH.md §6).
@Suite struct HTTPUploadTests {
    @Test func itemsAreReadAndBadJIDsLeftOut() throws {
        let query = TestXML.element("""
            <query xmlns='http://jabber.org/protocol/disco#items'><item jid='conference.localhost'/><item jid='upload.localhost' name='Upload'/>\
            <item jid='@bad'/><item/></query>
            """)
        #expect(HTTPUpload.items(query) == [JID("conference.localhost")!, JID("upload.localhost")!])
        #expect(HTTPUpload.items(TestXML.element("<query xmlns='other'><item jid='a.example'/></query>")).isEmpty)
    }

    @Test func aServiceListsTheFeatureAndItsFormGivesTheLimit() throws {
        let jid = JID("upload.localhost")!
        let info = try DiscoInfo(element: TestXML.element("""
            <query xmlns='http://jabber.org/protocol/disco#info'><identity category='store' type='file'/>\
            <feature var='urn:xmpp:http:upload:0'/><x xmlns='jabber:x:data' type='result'>\
            <field var='FORM_TYPE' type='hidden'><value>urn:xmpp:http:upload:0</value></field>\
            <field var='max-file-size'><value>10485760</value></field></x></query>
            """))
        #expect(HTTPUpload.Service(jid: jid, info: info) == HTTPUpload.Service(jid: jid, maxFileSize: 10_485_760))
        let unlimited = DiscoInfo(features: [XMPPNamespace.httpUpload])
        #expect(HTTPUpload.Service(jid: jid, info: unlimited)?.maxFileSize == nil)
        #expect(HTTPUpload.Service(jid: jid, info: DiscoInfo(features: ["http://jabber.org/protocol/muc"])) == nil)
    }

    @Test func theRequestCarriesNameSizeAndType() {
        let request = HTTPUpload.request(fileName: "a b.png", size: 123, contentType: "image/png")
        #expect(request.name == "request" && request.namespace == XMPPNamespace.httpUpload)
        #expect(request[attribute: "filename"] == "a b.png")
        #expect(request[attribute: "size"] == "123")
        #expect(request[attribute: "content-type"] == "image/png")
    }

    @Test func aSlotKeepsOnlyAuthorizationCookieAndExpiresHeaders() throws {
        let slot = try #require(HTTPUpload.Slot(element: TestXML.element("""
            <slot xmlns='urn:xmpp:http:upload:0'><put url='https://up.example/put/a.png'>\
            <header name='Authorization'>Bearer x</header><header name='Cookie'>c=1</header>\
            <header name='Expires'>Tue, 01 Dec 2026 00:00:00 GMT</header><header name='Host'>evil.example</header>\
            <header name='X-Other'>1</header><header name='authorization'>two&#10;Host: evil</header></put>\
            <get url='https://up.example/get/a.png'/></slot>
            """)))
        #expect(slot.putURL == "https://up.example/put/a.png")
        #expect(slot.getURL == "https://up.example/get/a.png")
        #expect(slot.putHeaders.map(\.name) == ["Authorization", "Cookie", "Expires"], "others ignored, a header with a newline dropped")
        #expect(slot.putHeaders.first?.value == "Bearer x")
    }

    @Test func aSlotWithoutURLsOrWithOtherSchemesIsNone() throws {
        #expect(HTTPUpload.Slot(element: TestXML.element("<slot xmlns='urn:xmpp:http:upload:0'><put url='https://a/x'/></slot>")) == nil)
        #expect(HTTPUpload.Slot(element: TestXML.element(
            "<slot xmlns='urn:xmpp:http:upload:0'><put url='file:///etc/passwd'/><get url='https://a/x'/></slot>")) == nil)
        #expect(HTTPUpload.Slot(element: TestXML.element(
            "<slot xmlns='urn:xmpp:http:upload:1'><put url='https://a/x'/><get url='https://a/x'/></slot>")) == nil)
    }
}
