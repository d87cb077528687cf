import IsthmusCommon
import MessageFormatting
import Testing

/// Many generated tag soups (a fixed seed, so every run checks the same inputs): whatever the nesting, no Matrix id
/// or `mxc://` URI from a link target reaches the body, nothing from a dropped element shows, and the body goes
/// through the XEP-0393 parser again.
@Suite struct GeneratedHTMLTests {
    /// SplitMix64: small, deterministic, good enough to pick tags.
    struct Generator {
        var state: UInt64

        mutating func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var value = state
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((value ^ (value >> 31)) % UInt64(bound))
        }

        mutating func pick<T>(_ items: [T]) -> T { items[next(items.count)] }
    }

    static let hrefs = [
        "https://matrix.to/#/@alice:example.org", "https://matrix.to/#/%40bob%3Aexample.org",
        "https://matrix.to/#/!room:example.org/$event", "https://matrix.to/#/#alias:example.org",
        "matrix:u/carol:example.org", "matrix:roomid/room:example.org", "mxc://example.org/media",
        "https://example.com/@dave:example.org", "https://web.example/#/room/!r:example.org", "https://ok.example/path",
        "javascript:alert(1)",
    ]
    static let words = ["a", "b c", "*", "_", "~", "`", "> ", "&amp;", "&lt;x&gt;", " ", "\n", "```", "d*e", "f_"]
    static let tags = [
        "b", "i", "em", "strong", "del", "code", "pre", "blockquote", "ul", "ol", "li", "p", "div", "span", "br", "h2",
        "table", "tr", "td",
    ]

    static func soup(_ generator: inout Generator, size: Int) -> String {
        var html = ""
        for _ in 0..<size {
            switch generator.next(10) {
            case 0...3: html += generator.pick(words)
            case 4: html += "<a href=\"\(generator.pick(hrefs))\">\(generator.pick(words))"
            case 5: html += "</\(generator.pick(tags + ["a"]))>"
            case 6: html += generator.next(2) == 0 ? "<script>SECRET</script>" : "<mx-reply>SECRET</mx-reply>"
            case 7: html += "<img src=\"mxc://example.org/i\" alt=\"\(generator.pick(words))\">"
            default: html += "<\(generator.pick(tags))>"
            }
        }
        return html
    }

    @Test func noLinkTargetOrDroppedTextLeaks() {
        var generator = Generator(state: 0x1557_4D05)
        for _ in 0..<400 {
            let html = Self.soup(&generator, size: 1 + generator.next(60))
            let styled = HTMLToStyling.convert(html) { user in user.localpart == "alice" ? "Alice" : nil }
            for leak in ["example.org", "mxc:", "$event", "matrix.to", "matrix:", "SECRET", "@dave"] {
                #expect(!styled.body.contains(leak), "\(leak) leaked from \(html)")
            }
            #expect(!styled.body.hasPrefix("\n") && !styled.body.hasSuffix("\n"), "blank line at an end for \(html)")
            for user in styled.mentions {
                #expect(["alice", "bob", "carol"].contains(user.localpart))
            }
            _ = StylingToHTML.convert(styled.body)
        }
    }
}
