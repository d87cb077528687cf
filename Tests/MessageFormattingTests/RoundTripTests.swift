import MessageFormatting
import Testing

/// Matrix HTML → XEP-0393 → Matrix HTML gives back the styling, and XEP-0393 → HTML → XEP-0393 the body, where the
/// two formats can express the same thing.
@Suite struct RoundTripTests {
    @Test(arguments: [
        ("<strong>a</strong> and <em>b</em>", "<strong>a</strong> and <em>b</em>"),
        ("<del>gone</del> <code>x &lt; y</code>", "<del>gone</del> <code>x &lt; y</code>"),
        ("<b>bold <i>both</i></b>", "<strong>bold <em>both</em></strong>"),
        ("<blockquote>q</blockquote>after", "<blockquote>q</blockquote>after"),
        ("<blockquote>a<blockquote>b</blockquote></blockquote>", "<blockquote>a<blockquote>b</blockquote></blockquote>"),
        ("<pre><code>a\n  *b*</code></pre>", "<pre><code>a\n  *b*</code></pre>"),
        ("<b>one<br>two</b>", "<strong>one</strong><br><strong>two</strong>"),
    ])
    func htmlSurvivesTheXMPPSide(html: String, expected: String) {
        let body = HTMLToStyling.convert(html) { _ in nil }.body
        #expect(StylingToHTML.convert(body) == expected)
    }

    @Test(arguments: [
        "*a* _b_ ~c~ `d`",
        "> quoted *text*\n\nreply",
        "```\ncode *x*\n```",
        "plain *strong*plain",
        "*_both_*",
    ])
    func bodySurvivesTheMatrixSide(body: String) throws {
        let html = try #require(StylingToHTML.convert(body))
        #expect(HTMLToStyling.convert(html) { _ in nil }.body == body)
    }
}
