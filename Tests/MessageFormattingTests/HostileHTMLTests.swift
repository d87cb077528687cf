import IsthmusCommon
import MessageFormatting
import Testing

/// Untrusted `formatted_body` input: nothing crashes, nothing takes long, nothing hidden comes through.
@Suite struct HostileHTMLTests {
    static func body(_ html: String) -> String {
        HTMLToStyling.convert(html) { _ in nil }.body
    }

    /// Far above the ~1 s of CPU the largest case takes in a debug build, far below what a quadratic walk over a
    /// megabyte would take: only a blow-up fails it, not a loaded machine.
    static let sanityBound = Duration.seconds(30)

    /// Runs `work` and checks it finished within ``sanityBound`` (a sanity check, not a benchmark).
    static func completesQuickly<T>(_ work: () -> T, sourceLocation: SourceLocation = #_sourceLocation) -> T {
        let clock = ContinuousClock()
        let start = clock.now
        let result = work()
        #expect(clock.now - start < sanityBound, sourceLocation: sourceLocation)
        return result
    }

    @Test func scriptIsDroppedWherever() {
        #expect(Self.body("<script>alert(1)</script>") == "")
        #expect(Self.body("<b>a<script>alert(1)</script>b</b>") == "*ab*")
        #expect(Self.body("<SCRIPT type=\"text/javascript\">alert(1)</SCRIPT>ok") == "ok")
        #expect(Self.body("<a href=\"https://e.com\"><script>x</script>https://e.com</a>") == "https://e.com")
        #expect(Self.body("<svg><script>alert(1)</script></svg>ok") == "ok")
    }

    @Test(arguments: [
        ("b", "*deep*after"),
        ("span", "deepafter"),
        ("div", "deep\nafter"),
        ("blockquote", String(repeating: "> ", count: 32) + "deep\n\nafter"),
        ("pre", "```\ndeep\n```\n\nafter"),
        ("table", "deep\n\nafter"),
        ("ul", "deep\n\nafter"),
        ("li", "- deep\nafter"),
        ("a href=\"https://x.example\"", "deep <https://x.example>after"),
    ])
    func tenThousandNestedElementsKeepTheirTextWithoutOverflowingTheStack(open: String, body: String) {
        let name = open.prefix { $0 != " " }
        let html = String(repeating: "<\(open)>", count: 10_000) + "deep" + String(repeating: "</\(name)>", count: 10_000) + "after"
        #expect(Self.completesQuickly { Self.body(html) } == body)
    }

    @Test func deeplyNestedListsStopIndentingAndCountersCannotOverflow() {
        let lists = String(repeating: "<ul><li>", count: 10_000) + "deep"
        #expect(Self.body(lists) == String(repeating: " ", count: 14) + "- deep")
        let big = "<ol start=\"9223372036854775807\"><li>a</li><li>b</li></ol><ol start=\"-5\"><li>c</li></ol>"
        #expect(Self.body(big) == "1000000000. a\n1000000001. b\n\n-5. c")
        let unparsable = "<ol start=\"99999999999999999999\"><li>a</li></ol>"
        #expect(Self.body(unparsable) == "1. a")
    }

    @Test func nestingBelowTheCapsKeepsItsShape() {
        let html = String(repeating: "<span>", count: 200) + "deep" + String(repeating: "</span>", count: 200)
        #expect(Self.body(html) == "deep")
        let quotes = String(repeating: "<blockquote>", count: 20) + "q" + String(repeating: "</blockquote>", count: 20)
        #expect(Self.body(quotes) == String(repeating: "> ", count: 20) + "q")
    }

    @Test func unclosedAndStrayTags() {
        #expect(Self.body("<b>bold <i>both") == "*bold _both_*")
        #expect(Self.body("<p>one<p>two") == "one\n\ntwo")
        #expect(Self.body("<ul><li>a<li>b") == "- a\n- b")
        #expect(Self.body("<a href=\"https://x.example\">link") == "link <https://x.example>")
        #expect(Self.body("</b></i></blockquote>text</p>") == "text")
        #expect(Self.body("<b <i>x") == "x" || Self.body("<b <i>x") == "*x*")
        #expect(Self.body("<pre>never closed\n*x*") == "```\nnever closed\n*x*\n```")
        #expect(Self.body("<!-- comment -->a<!DOCTYPE html><?pi x?>b") == "ab")
    }

    /// One megabyte of inline tags, then a few hundred kilobytes each of the other shapes that make lines or frames.
    @Test func oneMegabyteOfTagsCompletes() {
        let spans = String(repeating: "<b>x</b> ", count: 110_000)
        let body = Self.completesQuickly { Self.body(spans) }
        #expect(body.hasPrefix("*x* *x* "))
        #expect(body.count == 110_000 * 4 - 1)

        let breaks = Self.completesQuickly { Self.body("a" + String(repeating: "<br>", count: 50_000) + "b") }
        #expect(breaks.hasPrefix("a\n\n") && breaks.hasSuffix("\nb"))

        let paragraphs = Self.completesQuickly { Self.body(String(repeating: "<p>p", count: 50_000)) }
        #expect(paragraphs.split(separator: "\n\n").count == 50_000)

        let stray = Self.completesQuickly { Self.body(String(repeating: "</b>", count: 50_000) + "end") }
        #expect(stray == "end")

        let links = Self.completesQuickly {
            Self.body(String(repeating: "<a href=\"https://matrix.to/#/@u:example.org\">u</a>", count: 20_000))
        }
        #expect(links == String(repeating: "u", count: 20_000))
    }

    @Test func nulAndInvalidUTF8() {
        #expect(Self.body("a\u{0}b") == "a\u{FFFD}b")
        #expect(Self.body("<b>\u{0}</b>after") == "*\u{FFFD}*after")
        let invalid = String(decoding: [0x3C, 0x62, 0x3E, 0xFF, 0xFE, 0x3C, 0x2F, 0x62, 0x3E, 0xC3], as: UTF8.self)
        #expect(Self.body(invalid) == "*\u{FFFD}\u{FFFD}*\u{FFFD}")
        #expect(Self.body("<meta charset=\"iso-8859-1\">é ü") == "é ü")
    }

    @Test func hiddenAttributesNeverShow() {
        let html = "<span title=\"@alice:example.org\" data-mx-spoiler=\"!r:example.org\">x</span>"
            + "<img src=\"mxc://example.org/abc\"><font color=\"red\">y</font>"
        #expect(Self.body(html) == "xy")
    }

    @Test func emptyAndWhitespaceOnlyInput() {
        #expect(HTMLToStyling.convert("") { _ in nil } == StyledText(body: ""))
        #expect(Self.body(" \n\t ") == "")
        #expect(Self.body("<p> </p><br>") == "")
    }
}
