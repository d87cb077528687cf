import TestSupport
import Testing
import XMLStream

/// Hostile input is refused with the right kind of error, under every delivery, and nothing that completed before
/// it is lost.
@Suite struct HostileInputTests {
    static let header = XMLStreamParserTests.header
    static let ns = XMLStreamParserTests.componentNS
    /// A stanza that precedes each attack and must still be delivered.
    static let before = "<message id='before'><body>ok</body></message>"
    static let beforeElement = XElement(
        "message", namespace: ns, ["id": "before"],
        children: [.element(XElement("body", namespace: ns, children: [.text("ok")]))])

    /// The header, the good stanza, then the attack: expects the two events and then `kind`.
    func expectRefusedAfterGoodStanza(
        _ attack: String, _ kind: XMLStreamError.Kind, limits: XMLStreamLimits = .default,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let expected = DripFeed.Outcome(
            events: [.streamStart(XMLStreamParserTests.expectedHeader), .element(Self.beforeElement)], error: kind)
        let problems = DripFeed.mismatches(Self.header + Self.before + attack, expected: expected, limits: limits)
        #expect(problems == [], sourceLocation: sourceLocation)
    }

    /// The attack before anything else: no events at all, then `kind`.
    func expectRefusedUpFront(_ attack: String, _ kind: XMLStreamError.Kind, sourceLocation: SourceLocation = #_sourceLocation) {
        let problems = DripFeed.mismatches(attack, expected: DripFeed.Outcome(events: [], error: kind))
        #expect(problems == [], sourceLocation: sourceLocation)
    }

    @Test func billionLaughsIsRefusedAtTheDoctype() {
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE lolz [
             <!ENTITY lol "lol">
             <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
             <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
            ]>
            <stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'><m>&lol3;</m>
            """
        expectRefusedUpFront(laughs, .doctype)
    }

    @Test func externalEntityFileURLIsRefused() {
        let xxe = "<?xml version='1.0'?><!DOCTYPE s [<!ENTITY xxe SYSTEM 'file:///etc/passwd'>]>"
            + "<stream:stream xmlns:stream='http://etherx.jabber.org/streams'><m>&xxe;</m>"
        expectRefusedUpFront(xxe, .doctype)
    }

    @Test func externalDoctypeIsRefused() {
        expectRefusedUpFront("<!DOCTYPE stream SYSTEM 'file:///etc/passwd'><stream/>", .doctype)
    }

    @Test func doctypeOrEntityInsideTheStreamIsNotWellFormed() {
        let parser = XMLStreamParser()
        var events: [XMLStreamEvent] = []
        #expect(throws: XMLStreamError.self) {
            try parser.feed(Array((Self.header + "<!ENTITY x 'y'><m>&x;</m>").utf8), into: &events)
        }
        #expect(events.count == 1)
    }

    /// Found by fuzzing (Fuzz/fuzz-xml-stream): libxml2 accepts `a:b:c` with a warning, and the stanza would be
    /// serialized as a different element. Refused under every delivery, element and attribute names alike.
    @Test(arguments: ["<feature:urn:x xmlns:feature='urn:f'/>", "<m xmlns:p='urn:p' p:a:b='v'/>", "<a:b:c/>"])
    func namesWithASecondColonAreRefused(attack: String) {
        expectRefusedAfterGoodStanza(attack, .notWellFormed(code: 202))
    }

    /// Found by fuzzing (Fuzz/fuzz-xml-stream): libxml2 reads a prefix nobody declared with a warning and drops it,
    /// so `<text sid:xmlns='urn:x'/>` became an attribute `xmlns`, serialized again as a second namespace declaration.
    /// Refused, for elements and attributes alike (the `xml:` prefix is always declared).
    @Test(arguments: ["<text sid:xmlns='urn:x'/>", "<m p:a='v'/>", "<x:m/>", "<m xmlns:p='urn:p'><p:a/><q:b/></m>"])
    func undeclaredPrefixesAreRefused(attack: String) {
        expectRefusedAfterGoodStanza(attack, .notWellFormed(code: 201))
    }

    /// Found by the long fuzz run (Fuzz/fuzz-xml-stream): `<xml:ltxt xmlns='ur'/>` read as an element in the XML
    /// namespace, serialized again as `xmlns='http://www.w3.org/XML/1998/namespace'`, which no parser may accept. The
    /// XML namespace is for `xml:` attributes only (Namespaces in XML §3): an element in it is refused. Another prefix
    /// bound to it is dropped by libxml2, so the prefix counts as undeclared.
    @Test(arguments: ["<xml:ltxt xmlns='ur'/>", "<xml:m/>", "<m><xml:b/></m>"])
    func elementsInTheXMLNamespaceAreRefused(attack: String) {
        expectRefusedAfterGoodStanza(attack, .notWellFormed(code: 200))
    }

    @Test func aPrefixBoundToTheXMLNamespaceIsUndeclared() {
        expectRefusedAfterGoodStanza("<m xmlns:p='http://www.w3.org/XML/1998/namespace'><p:a/></m>", .notWellFormed(code: 201))
    }

    @Test func theXMLPrefixAndDeclaredPrefixesStillPass() throws {
        let parser = XMLStreamParser()
        var events: [XMLStreamEvent] = []
        try parser.feed(Array((Self.header + "<m xml:lang='en' xmlns:p='urn:p' p:a='v'><p:b/></m>").utf8), into: &events)
        #expect(events.count == 2)
    }

    @Test func undeclaredEntityIsRefused() {
        let parser = XMLStreamParser()
        var events: [XMLStreamEvent] = []
        do {
            try parser.feed(Array((Self.header + Self.before + "<m>&xxe;</m>").utf8), into: &events)
            Issue.record("undeclared entity accepted")
        } catch {
            guard case .notWellFormed = error.kind else {
                Issue.record("unexpected kind \(error.kind)")
                return
            }
        }
        #expect(events.count == 2)
    }

    @Test func commentsAreRefusedAnywhere() {
        expectRefusedUpFront("<!-- hi --><stream:stream xmlns:stream='http://etherx.jabber.org/streams'>", .comment)
        expectRefusedAfterGoodStanza("<!-- between -->", .comment)
        expectRefusedAfterGoodStanza("<message><!-- inside --></message>", .comment)
    }

    @Test func processingInstructionsAreRefused() {
        expectRefusedAfterGoodStanza("<message><?evil stuff?></message>", .processingInstruction)
        expectRefusedAfterGoodStanza("<?evil stuff?>", .processingInstruction)
        expectRefusedUpFront(
            "<?xml version='1.0'?><?xml-stylesheet href='x'?><stream:stream xmlns:stream='s'>", .processingInstruction)
    }

    @Test func invalidUTF8IsRefusedInTextAndAttributes() {
        let cases: [[UInt8]] = [
            [0xFF],                    // never valid
            [0xC3],                    // truncated two-byte sequence
            [0x80],                    // lone continuation byte
            [0xC0, 0xAF],              // overlong '/'
            [0xED, 0xA0, 0x80],        // UTF-16 surrogate encoded in UTF-8
            [0xF4, 0x90, 0x80, 0x80],  // beyond U+10FFFF
        ]
        for bad in cases {
            for (open, close) in [("<message><body>a", "b</body></message>"), ("<message id='a", "b'/>")] {
                let bytes = Array((Self.header + Self.before + open).utf8) + bad + Array(close.utf8)
                let expected = DripFeed.Outcome(
                    events: [.streamStart(XMLStreamParserTests.expectedHeader), .element(Self.beforeElement)],
                    error: .invalidUTF8)
                let problems = DripFeed.mismatches(bytes, expected: expected, everySplit: false)
                #expect(problems == [], "bytes \(bad) in \(open)…")
            }
        }
    }

    @Test func nonUTF8EncodingDeclarationIsIgnoredAndLatin1BytesRefused() {
        let bytes = Array("<?xml version='1.0' encoding='ISO-8859-1'?><stream:stream xmlns:stream='s'><m>".utf8)
            + [0xE9] + Array("</m>".utf8)
        let outcome = DripFeed.run([bytes])
        #expect(outcome.error == .invalidUTF8)
    }

    @Test func oversizedStanzaIsRefusedEvenIfItNeverCloses() {
        let limits = XMLStreamLimits(maxStanzaBytes: 1000, maxDepth: 64)
        let big = "<message><body>" + String(repeating: "x", count: 2000) + "</body></message>"
        expectRefusedAfterGoodStanza(big, .stanzaTooLarge(limit: 1000), limits: limits)
        let neverCloses = "<message><body>" + String(repeating: "y", count: 2000)
        expectRefusedAfterGoodStanza(neverCloses, .stanzaTooLarge(limit: 1000), limits: limits)
        let hugeTag = "<message a='" + String(repeating: "z", count: 2000)
        expectRefusedAfterGoodStanza(hugeTag, .stanzaTooLarge(limit: 1000), limits: limits)
    }

    @Test func stanzasJustUnderTheLimitPassOneAfterAnother() throws {
        let stanza = "<message><body>" + String(repeating: "x", count: 900) + "</body></message>"
        let parser = XMLStreamParser(limits: XMLStreamLimits(maxStanzaBytes: 1000, maxDepth: 64))
        var input = Self.header
        for _ in 0..<50 { input += stanza }
        #expect(try parser.feed(Array(input.utf8)).count == 51)
    }

    @Test func defaultLimitIs256KiB() {
        #expect(XMLStreamLimits.default.maxStanzaBytes == 256 * 1024)
        let big = "<message><body>" + String(repeating: "x", count: 300 * 1024) + "</body></message>"
        let outcome = DripFeed.run([Array((Self.header + big).utf8)])
        #expect(outcome.error == .stanzaTooLarge(limit: 256 * 1024))
    }

    @Test func nestingTooDeepIsRefused() {
        let limits = XMLStreamLimits(maxStanzaBytes: 1 << 20, maxDepth: 10)
        let deep = String(repeating: "<a>", count: 11) + String(repeating: "</a>", count: 11)
        expectRefusedAfterGoodStanza(deep, .tooDeep(limit: 10), limits: limits)
        let parser = XMLStreamParser(limits: limits)
        let justFits = String(repeating: "<a>", count: 10) + String(repeating: "</a>", count: 10)
        #expect((try? parser.feed(Array((Self.header + justFits).utf8)).count) == 2)
    }

    @Test func textBetweenStanzasIsRefused() {
        expectRefusedAfterGoodStanza("junk<message/>", .textBetweenStanzas)
    }

    @Test func mismatchedTagsAreNotWellFormed() {
        let outcome = DripFeed.run([Array((Self.header + Self.before + "<a></b>").utf8)])
        #expect(outcome.events.count == 2)
        guard case .notWellFormed = outcome.error else {
            Issue.record("expected notWellFormed, got \(outcome)")
            return
        }
    }

    @Test func forbiddenCharacterReferenceIsRefused() {
        let outcome = DripFeed.run([Array((Self.header + Self.before + "<m>&#x1;</m>").utf8)])
        #expect(outcome.events.count == 2)
        #expect(outcome.error != nil)
    }

    @Test func aFailedParserKeepsFailing() {
        let parser = XMLStreamParser()
        _ = try? parser.feed(Array((Self.header + "<!-- x -->").utf8))
        #expect(throws: XMLStreamError.self) { try parser.feed(Array("<ok/>".utf8)) }
    }
}
