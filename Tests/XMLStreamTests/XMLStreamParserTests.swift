import TestSupport
import Testing
import XMLStream

/// Parser behaviour on well-formed streams, checked under every delivery (DripFeed).
@Suite struct XMLStreamParserTests {
    static let header = "<?xml version='1.0'?><stream:stream xmlns='jabber:component:accept' "
        + "xmlns:stream='http://etherx.jabber.org/streams' from='bridge.localhost' id='abc123'>"
    static let streamNS = "http://etherx.jabber.org/streams"
    static let componentNS = "jabber:component:accept"

    static let expectedHeader = StreamHeader(
        name: "stream", namespace: streamNS, contentNamespace: componentNS,
        attributes: ["from": "bridge.localhost", "id": "abc123"])

    @Test func headerStanzasAndEndUnderEveryDelivery() {
        let input = Self.header
            + "<handshake/>"
            + "<message to='a@b' type='groupchat' id='1'><body>Hi &amp; bye &lt;3 &#x1F600; ☃</body>"
            + "<x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='none' nick='a&amp;b &apos;c&apos;'/></x>"
            + "</message>\n  \n"
            + "<iq type='get'><![CDATA[<raw> & stuff]]></iq>"
            + "</stream:stream>"
        var body = XElement("body", namespace: Self.componentNS)
        body.append(text: "Hi & bye <3 😀 ☃")
        var x = XElement("x", namespace: "http://jabber.org/protocol/muc#user")
        x.append(XElement("item", namespace: "http://jabber.org/protocol/muc#user", ["affiliation": "none", "nick": "a&b 'c'"]))
        let message = XElement(
            "message", namespace: Self.componentNS, ["to": "a@b", "type": "groupchat", "id": "1"],
            children: [.element(body), .element(x)])
        let iq = XElement("iq", namespace: Self.componentNS, ["type": "get"], children: [.text("<raw> & stuff")])
        let expected = DripFeed.Outcome(events: [
            .streamStart(Self.expectedHeader),
            .element(XElement("handshake", namespace: Self.componentNS)),
            .element(message),
            .element(iq),
            .streamEnd,
        ], error: nil)
        #expect(DripFeed.mismatches(input, expected: expected) == [])
    }

    @Test func manyStanzasInOneChunkComeOutInOrder() throws {
        let parser = XMLStreamParser()
        var input = Self.header
        for index in 0..<500 { input += "<message id='m\(index)'><body>\(index)</body></message>" }
        let events = try parser.feed(Array(input.utf8))
        #expect(events.count == 501)
        let ids = events.compactMap { event -> String? in
            if case .element(let element) = event { element[attribute: "id"] } else { nil }
        }
        #expect(ids == (0..<500).map { "m\($0)" })
    }

    @Test func stanzaIsReportedTheMomentItCloses() throws {
        let parser = XMLStreamParser()
        #expect(try parser.feed(Array(Self.header.utf8)) == [.streamStart(Self.expectedHeader)])
        #expect(try parser.feed(Array("<presence><status>x</status>".utf8)) == [])
        let closing = try parser.feed(Array("</presence>".utf8))
        #expect(closing.count == 1)
        #expect(try parser.feed(Array("</stream:stream>".utf8)) == [.streamEnd])
    }

    @Test func whitespaceKeepalivesBetweenStanzasAreIgnored() throws {
        let parser = XMLStreamParser()
        _ = try parser.feed(Array(Self.header.utf8))
        for _ in 0..<10 { #expect(try parser.feed(Array(" \n\t ".utf8)) == []) }
        #expect(try parser.feed(Array("<a/>".utf8)) == [.element(XElement("a", namespace: Self.componentNS))])
    }

    @Test func multiByteCharactersSplitAcrossChunksSurvive() throws {
        // "é😀" straddles every chunk boundary when fed byte by byte; DripFeed already covers it, this names it.
        let input = Self.header + "<m>é😀</m>"
        let outcome = DripFeed.run(Array(input.utf8).map { [$0] })
        guard case .element(let element) = outcome.events.last else {
            Issue.record("no element: \(outcome)")
            return
        }
        #expect(element.text == "é😀")
    }

    @Test func resetStartsANewStream() throws {
        let parser = XMLStreamParser()
        _ = try parser.feed(Array((Self.header + "<a/>").utf8))
        parser.reset()
        let events = try parser.feed(Array((Self.header + "<b/>").utf8))
        #expect(events == [.streamStart(Self.expectedHeader), .element(XElement("b", namespace: Self.componentNS))])
    }

    @Test func xmlLangOnTheHeaderIsKeptAsXmlLang() throws {
        let parser = XMLStreamParser()
        let events = try parser.feed(Array(
            "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' xml:lang='en'>".utf8))
        guard case .streamStart(let header) = events.first else {
            Issue.record("no header")
            return
        }
        #expect(header.attributes["xml:lang"] == "en")
        #expect(header.contentNamespace == "jabber:client")
    }
}
