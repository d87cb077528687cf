import XMLStream

/// Parses literal XML in tests: `element("<message …/>")` reads one element as it would arrive on a component stream.
public enum TestXML {
    /// The component stream header the helpers prepend.
    public static let componentHeader = "<stream:stream xmlns='jabber:component:accept' "
        + "xmlns:stream='http://etherx.jabber.org/streams' id='s1'>"

    /// The one top-level element in `xml` (in the `jabber:component:accept` namespace unless it says otherwise).
    /// Crashes the test on malformed input: literal test data is expected to be well-formed.
    public static func element(_ xml: String) -> XElement {
        let events = try! XMLStreamParser().feed(Array((componentHeader + xml).utf8))
        guard case .element(let element)? = events.last else { fatalError("no element in \(xml)") }
        return element
    }
}
