import TestSupport
import Testing
import XMLStream

/// The serializer escapes so that the parser gives back exactly what was written.
@Suite struct XMLSerializerTests {
    static let ns = "jabber:component:accept"
    static let header = XMLStreamParserTests.header

    /// Serializes `element` as a stanza of a component stream and parses it back.
    func roundTrip(_ element: XElement) throws -> XElement? {
        let bytes = Array(Self.header.utf8) + XMLSerializer.bytes(of: element, defaultNamespace: Self.ns)
        let events = try XMLStreamParser().feed(bytes)
        guard case .element(let parsed) = events.last else { return nil }
        return parsed
    }

    @Test func specialCharactersInTextAndAttributesEscapeAndRoundTrip() throws {
        let tricky = "a & b < c > d \" e ' f\r\ng\th ]]> &amp; 😀"
        var element = XElement("message", namespace: Self.ns, ["id": tricky, "to": "x@y"])
        element.append(XElement("body", namespace: Self.ns, children: [.text(tricky)]))
        #expect(try roundTrip(element) == element)
        let text = XMLSerializer.string(of: element, defaultNamespace: Self.ns)
        #expect(text == "<message id='a &amp; b &lt; c &gt; d &quot; e &apos; f&#xD;&#xA;g&#x9;h ]]&gt; &amp;amp; 😀' to='x@y'>"
            + "<body>a &amp; b &lt; c &gt; d \" e ' f&#xD;\ng\th ]]&gt; &amp;amp; 😀</body></message>")
    }

    @Test func forbiddenControlCharactersBecomeReplacementCharacters() throws {
        let element = XElement("m", namespace: Self.ns, ["a": "x\u{1}y"], children: [.text("p\u{0}q\u{8}r\u{1B}s\u{FFFE}t\u{FFFF}u")])
        let parsed = try #require(try roundTrip(element))
        #expect(parsed[attribute: "a"] == "x\u{FFFD}y")
        #expect(parsed.text == "p\u{FFFD}q\u{FFFD}r\u{FFFD}s\u{FFFD}t\u{FFFD}u")
        #expect(XMLEscaping.escapedText("\u{7F}\u{85}\u{FFFD}") == "\u{7F}\u{85}\u{FFFD}")  // allowed by XML 1.0
    }

    @Test func namespacesAreDeclaredOnlyWhereTheyChange() {
        let muc = "http://jabber.org/protocol/muc#user"
        var x = XElement("x", namespace: muc)
        x.append(XElement("item", namespace: muc, ["nick": "n"]))
        x.append(XElement("status", namespace: muc, ["code": "110"]))
        let presence = XElement("presence", namespace: Self.ns, ["to": "a@b"], children: [.element(x)])
        #expect(XMLSerializer.string(of: presence, defaultNamespace: Self.ns)
            == "<presence to='a@b'><x xmlns='\(muc)'><item nick='n'/><status code='110'/></x></presence>")
        // With no default given, the element's own namespace is taken as the stream's.
        #expect(XMLSerializer.string(of: presence).hasPrefix("<presence to='a@b'>"))
    }

    @Test func streamPrefixIsUsedForStreamLevelElements() throws {
        let streams = "http://etherx.jabber.org/streams"
        let condition = XElement("conflict", namespace: "urn:ietf:params:xml:ns:xmpp-streams")
        let error = XElement("error", namespace: streams, children: [.element(condition)])
        let text = XMLSerializer.string(of: error, defaultNamespace: Self.ns, prefixes: ["stream": streams])
        #expect(text == "<stream:error><conflict xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error>")
        #expect(try roundTrip(error) == error)
    }

    @Test func qualifiedAttributesRoundTrip() throws {
        let element = XElement("body", namespace: Self.ns, attributes: [
            XAttribute("lang", "en", namespace: XMLNamespaces.xml),
            XAttribute("weird", "1", namespace: "urn:example:attr"),
        ], children: [.text("hi")])
        #expect(try roundTrip(element) == element)
        #expect(XMLSerializer.string(of: element).hasPrefix("<body xml:lang='en' xmlns:ns0='urn:example:attr' ns0:weird='1'>"))
    }

    @Test func streamStartAndEnd() throws {
        let start = XMLSerializer.streamStart(
            namespace: "http://etherx.jabber.org/streams", contentNamespace: Self.ns,
            attributes: ["to": "bridge.localhost", "id": nil])
        #expect(String(decoding: start, as: UTF8.self)
            == "<stream:stream xmlns='jabber:component:accept' xmlns:stream='http://etherx.jabber.org/streams' to='bridge.localhost'>")
        let events = try XMLStreamParser().feed(start + XMLSerializer.streamEnd())
        #expect(events.count == 2)
        #expect(events.last == .streamEnd)
    }
}
