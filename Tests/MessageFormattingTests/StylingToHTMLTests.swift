import MessageFormatting
import Testing

/// XMPP → Matrix against XEP-0393's own examples ("Business Rules": the span examples and non-examples, the
/// preformatted and quotation examples) and the escaping the bridge relies on.
@Suite struct StylingToHTMLTests {
    @Test(arguments: [
        ("*strong*", "<strong>strong</strong>"),
        ("plain *strong* plain", "plain <strong>strong</strong> plain"),
        ("*strong* plain *strong*", "<strong>strong</strong> plain <strong>strong</strong>"),
        ("*strong*plain*", "<strong>strong</strong>plain*"),
        ("* plain *strong*", "* plain <strong>strong</strong>"),
        ("Everyone ~dis~likes cake.", "Everyone <del>dis</del>likes cake."),
        ("Wow, I can write in `monospace`!", "Wow, I can write in <code>monospace</code>!"),
        ("This is `*monospace*`", "This is <code>*monospace*</code>"),
        ("This is *`monospace and bold`*", "This is <strong><code>monospace and bold</code></strong>"),
        ("_emphasized span containing *strong span*_",
         "<em>emphasized span containing <strong>strong span</strong></em>"),
        ("The full title is _Twelfth Night, or What You Will_ but\n_most_ people shorten it.",
         "The full title is <em>Twelfth Night, or What You Will</em> but<br><em>most</em> people shorten it."),
        ("The full title is \"Twelfth Night, or What You Will\" but\n*most* people shorten it.",
         "The full title is &quot;Twelfth Night, or What You Will&quot; but<br><strong>most</strong> people shorten it."),
    ])
    func spanExamplesAreStyled(body: String, html: String) {
        #expect(StylingToHTML.convert(body) == html)
    }

    @Test(arguments: [
        "not strong*", "*not strong", "*not \n strong*", "*not *strong", "**", "****",
        "(There are three blocks in this body marked by parens,)\n(but there is no *formatting)\n(as spans* may not escape blocks.)",
        "_ not emphasis _", "snake_case_name and 2*3*4", "just\nlines\n\nof text", "",
    ])
    func nonExamplesAreNotStyled(body: String) {
        #expect(StylingToHTML.convert(body) == nil)
    }

    @Test func preformattedBlockIgnoresTheRestOfItsFirstLineAndStylesNothingInside() {
        let body = "```ignored\n(println \"Hello, world!\")\n*not strong*\n```\n\nThis should show up as monospace, preformatted text ⤴"
        #expect(StylingToHTML.convert(body) == "<pre><code>(println &quot;Hello, world!&quot;)\n*not strong*</code></pre>"
            + "This should show up as monospace, preformatted text ⤴")
    }

    @Test func preformattedBlockWithoutClosingEndsWithItsQuotation() {
        let body = "> ```\n> (println \"Hello, world!\")\n\nThe entire blockquote is a preformatted text block, but this line\nis plaintext!"
        #expect(StylingToHTML.convert(body) == "<blockquote><pre><code>(println &quot;Hello, world!&quot;)</code></pre></blockquote>"
            + "The entire blockquote is a preformatted text block, but this line<br>is plaintext!")
    }

    @Test func quotationEndsAtTheFirstLineWithoutGreaterThan() {
        #expect(StylingToHTML.convert("> That that is, is.\n\nSaid the old hermit of Prague.")
            == "<blockquote>That that is, is.</blockquote>Said the old hermit of Prague.")
        #expect(StylingToHTML.convert("> one\n> *two*\nthree") == "<blockquote>one<br><strong>two</strong></blockquote>three")
    }

    @Test func nestedQuotation() {
        #expect(StylingToHTML.convert(">> That that is, is.\n> Said the old hermit of Prague.\n\nWho?")
            == "<blockquote><blockquote>That that is, is.</blockquote>Said the old hermit of Prague.</blockquote>Who?")
        #expect(StylingToHTML.convert("> > inner\n> outer")
            == "<blockquote><blockquote>inner</blockquote>outer</blockquote>")
    }

    @Test func blankLinesAtTheEndsAreLeftOut() {
        #expect(StylingToHTML.convert("\n\n*a*\n\nb\n\n") == "<strong>a</strong><br><br>b")
        #expect(StylingToHTML.convert("> \n> *q*\n>\nafter") == "<blockquote><strong>q</strong></blockquote>after")
    }

    @Test func everyTextCharacterIsEscaped() {
        #expect(StylingToHTML.convert("*<b onclick='x'>&amp;</b>* \"q\"")
            == "<strong>&lt;b onclick=&#39;x&#39;&gt;&amp;amp;&lt;/b&gt;</strong> &quot;q&quot;")
        #expect(StylingToHTML.convert("```\n<script>alert(1)</script>\n```") == "<pre><code>&lt;script&gt;alert(1)&lt;/script&gt;</code></pre>")
        #expect(StylingToHTML.convert("`<img src=x>`") == "<code>&lt;img src=x&gt;</code>")
    }

    @Test func unstyledTurnsStylingOff() {
        #expect(StylingToHTML.convert("*strong*", unstyled: true) == nil)
        #expect(StylingToHTML.convert("> quote\n```\ncode\n```", unstyled: true) == nil)
        #expect(StylingToHTML.convert("*strong*", unstyled: false) == "<strong>strong</strong>")
    }

    @Test func spansNeverCrossLinesAndNeedNonSpaceInside() {
        #expect(StylingToHTML.convert("*a\nb*") == nil)
        #expect(StylingToHTML.convert("* a*") == nil)
        #expect(StylingToHTML.convert("*a *") == nil)
        #expect(StylingToHTML.convert("~~") == nil)
        #expect(StylingToHTML.convert("``") == nil)
    }

    @Test func openingAfterANonSpaceCharacterIsText() {
        #expect(StylingToHTML.convert("a*b*") == nil)
        #expect(StylingToHTML.convert("x_y_ and *z*") == "x_y_ and <strong>z</strong>")
    }

    @Test func quotationDepthIsBounded() {
        let body = String(repeating: ">", count: 10_000) + " deep"
        let html = StylingToHTML.convert(body)
        #expect(html?.hasPrefix(String(repeating: "<blockquote>", count: 32)) == true)
        #expect(html?.contains(String(repeating: "<blockquote>", count: 33)) == false)
    }

    @Test func manyUnmatchedDirectivesOnOneLineAreLinear() {
        let body = String(repeating: "*a _b ~c `d ", count: 50_000)
        let clock = ContinuousClock()
        let elapsed = clock.measure { #expect(StylingToHTML.convert(body) == nil) }
        #expect(elapsed < HostileHTMLTests.sanityBound)
    }
}
