import IsthmusCommon
import MessageFormatting
import Testing

/// Matrix `formatted_body` → XEP-0393 body: the element mapping, white space and line breaks.
@Suite struct HTMLToStylingTests {
    /// The body for `html` with pills kept as their text.
    static func body(_ html: String) -> String {
        HTMLToStyling.convert(html) { _ in nil }.body
    }

    @Test(arguments: [
        ("<strong>a</strong>", "*a*"), ("<b>a</b>", "*a*"),
        ("<em>a</em>", "_a_"), ("<i>a</i>", "_a_"),
        ("<del>a</del>", "~a~"), ("<s>a</s>", "~a~"), ("<strike>a</strike>", "~a~"),
        ("<code>a b</code>", "`a b`"),
        ("<b><i>both</i></b>", "*_both_*"),
        ("<b>a <i>b</i> <del>c</del></b>", "*a _b_ ~c~*"),
        ("<b>a<b>b</b></b>", "*ab*"),
        ("<del>a</del><s>b</s> <del>c</del>", "~ab~ ~c~"),
        ("<code>*x* _y_</code>", "`*x* _y_`"),
        ("<code><b>x</b></code>", "`x`"),
        ("<b><code>x</code></b>", "*`x`*"),
        ("plain <u>underline</u> <sup>2</sup> <span data-mx-color='#f00'>red</span>", "plain underline 2 red"),
    ])
    func inlineElementsBecomeSpans(html: String, body: String) {
        #expect(Self.body(html) == body)
    }

    /// XEP-0393 "Business Rules › Spans": an opening directive must follow the line start, white space or another opening directive,
    /// and the span must not start or end with white space. Otherwise the text is kept plain.
    @Test(arguments: [
        ("a<b>b</b>c", "abc"),
        ("<b>ab</b>c", "*ab*c"),
        ("a <b> b </b> c", "a *b* c"),
        ("x<b> y</b>", "x *y*"),
        ("<b> </b>x", "x"),
        ("<b></b><i></i>x", "x"),
        ("<b>a</b><i>b</i>", "*a*b"),
        ("<b>2*3</b> <code>a`b</code> <i>snake_case</i>", "2*3 a`b snake_case"),
        ("<i>_x_</i>", "_x_"),
    ])
    func spansAreWrittenOnlyWhereTheyParseBack(html: String, body: String) {
        #expect(Self.body(html) == body)
    }

    @Test func spanCrossingALineBreakIsClosedAndReopened() {
        #expect(Self.body("<b>one<br>two</b>") == "*one*\n*two*")
        #expect(Self.body("<em>a<p>b</p>c</em>") == "_a_\n\n_b_\n\n_c_")
    }

    @Test func paragraphsAndBreaks() {
        #expect(Self.body("<p>a</p><p>b</p>") == "a\n\nb")
        #expect(Self.body("a<br>b") == "a\nb")
        #expect(Self.body("a<br><br>b") == "a\n\nb")
        #expect(Self.body("<div>a</div><div>b</div>") == "a\nb")
        #expect(Self.body("<br><br><p></p><p>a</p><p></p><br><br>") == "a")
        #expect(Self.body("<p>a<br></p><p>b</p>") == "a\n\nb")
        #expect(Self.body("<p>\n   hello\n\t world   </p>") == "hello world")
        #expect(Self.body("<h1>Title</h1><p>text</p>") == "*Title*\n\ntext")
        #expect(Self.body("a<hr>b") == "a\n\nb")
    }

    @Test func preformattedBlocks() {
        #expect(Self.body("<pre><code>let x = 1\n  let y = *2*\n</code></pre>") == "```\nlet x = 1\n  let y = *2*\n```")
        #expect(Self.body("<p>before</p><pre><code class=\"language-swift\">x</code></pre><p>after</p>")
            == "before\n\n```\nx\n```\n\nafter")
        #expect(Self.body("<pre>a<br>b <b>c</b></pre>") == "```\na\nb c\n```")
        #expect(Self.body("<pre></pre>x") == "x")
        #expect(Self.body("<pre>a\r\nb\rc\r\n</pre>") == "```\na\nb\nc\n```")
    }

    @Test func quotations() {
        #expect(Self.body("<blockquote><p>q1</p><p>q2</p></blockquote><p>after</p>") == "> q1\n>\n> q2\n\nafter")
        #expect(Self.body("<blockquote>outer<blockquote>inner</blockquote>back</blockquote>")
            == "> outer\n>\n> > inner\n>\n> back")
        #expect(Self.body("<blockquote><pre><code>code</code></pre></blockquote>") == "> ```\n> code\n> ```")
        #expect(Self.body("<blockquote><b>a<br>b</b></blockquote>") == "> *a*\n> *b*")
    }

    @Test func lists() {
        #expect(Self.body("<ul><li>one</li><li>two</li></ul>") == "- one\n- two")
        #expect(Self.body("<ol><li>a</li><li>b</li></ol>") == "1. a\n2. b")
        #expect(Self.body("<ol start=\"9\"><li>a</li><li>b</li></ol>") == "9. a\n10. b")
        #expect(Self.body("<ul><li>a<ul><li>b</li><li>c<ol><li>d</li></ol></li></ul></li><li>e</li></ul>")
            == "- a\n  - b\n  - c\n    1. d\n- e")
        #expect(Self.body("<p>intro</p><ul><li>x<br>continued</li></ul><p>outro</p>") == "intro\n\n- x\n  continued\n\noutro")
        #expect(Self.body("<blockquote><ul><li>q</li></ul></blockquote>") == "> - q")
    }

    @Test func tablesImagesAndEntities() {
        #expect(Self.body("<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>") == "a\tb\n1\t2")
        #expect(Self.body("<img src=\"mxc://example.org/abc\" alt=\":cat:\"> hi") == ":cat: hi")
        #expect(Self.body("&lt;b&gt; &amp; &quot; &#x1F600; a&nbsp;b") == "<b> & \" 😀 a\u{A0}b")
    }

    /// What Element's Markdown (commonmark) sends, newlines between blocks included.
    @Test func elementMarkdownOutput() {
        let html = "<p><strong>bold</strong> and <code>code</code></p>\n<blockquote>\n<p>quote</p>\n</blockquote>\n"
            + "<ul>\n<li>item1</li>\n<li>item2</li>\n</ul>\n<pre><code class=\"language-sh\">ls -l\n</code></pre>\n"
        #expect(Self.body(html) == "*bold* and `code`\n\n> quote\n\n- item1\n- item2\n\n```\nls -l\n```")
        let loose = "<ul>\n<li>\n<p>one</p>\n</li>\n<li>\n<p>two</p>\n</li>\n</ul>"
        #expect(Self.body(loose) == "- one\n\n- two")
    }

    @Test func legacyReplyFallbackIsRemoved() {
        let html = "<mx-reply><blockquote><a href=\"https://matrix.to/#/!room:example.org/$event\">In reply to</a> "
            + "<a href=\"https://matrix.to/#/@alice:example.org\">@alice:example.org</a><br>quoted *text*</blockquote>"
            + "</mx-reply>the <b>reply</b>"
        let styled = HTMLToStyling.convert(html) { _ in "Alice" }
        #expect(styled == StyledText(body: "the *reply*", mentions: []))
    }

    @Test func scriptAndStyleContentsAreDropped() {
        #expect(Self.body("<p>a</p><script>alert(1)</script><style>p { color: red }</style>b") == "a\n\nb")
        #expect(Self.body("<b>x</b><script>document.write('<b>y</b>')</script>") == "*x*")
        #expect(Self.body("<head><title>t</title></head>body") == "body")
        #expect(Self.body("a<textarea>t</textarea><select><option>o</option></select><noscript>n</noscript>b") == "ab")
    }
}
