import IsthmusCommon
import MessageFormatting
import Testing

/// Pills for XMPP → Matrix mentions: escaped, percent-encoded, and readable back by the Matrix → XMPP converter.
@Suite struct MentionPillTests {
    static let alice = UserID("@alice:example.org")!

    @Test func plainPill() {
        #expect(MentionPill.html(for: Self.alice, displayText: "Alice")
            == "<a href=\"https://matrix.to/#/@alice:example.org\">Alice</a>")
    }

    @Test func displayTextIsEscaped() {
        #expect(MentionPill.html(for: Self.alice, displayText: "<b>A&B</b> \"q\" 'x'")
            == "<a href=\"https://matrix.to/#/@alice:example.org\">&lt;b&gt;A&amp;B&lt;/b&gt; &quot;q&quot; &#39;x&#39;</a>")
    }

    @Test func idsArePercentEncoded() throws {
        let odd = try #require(UserID("@a/b?c#d%e&f\"g'h<i>:example.org"))
        #expect(MentionPill.matrixToURL(for: odd) == "https://matrix.to/#/@a%2Fb%3Fc%23d%25e%26f%22g%27h%3Ci%3E:example.org")
        let ipv6 = try #require(UserID("@bob:[::1]:8448"))
        #expect(MentionPill.matrixToURL(for: ipv6) == "https://matrix.to/#/@bob:%5B::1%5D:8448")
        let kept = try #require(UserID("@a-b.c_d~e=f+g!h$i,j;k:example.org"))
        #expect(MentionPill.matrixToURL(for: kept) == "https://matrix.to/#/@a-b.c_d~e=f+g!h$i,j;k:example.org")
    }

    @Test func nonASCIIIdIsEncodedAsUTF8() throws {
        guard let user = UserID("@zoë:example.org") else { return }  // only if UserID accepts non-ASCII
        #expect(MentionPill.matrixToURL(for: user) == "https://matrix.to/#/@zo%C3%AB:example.org")
    }

    @Test func pillRoundTripsThroughTheHTMLConverter() {
        let html = MentionPill.html(for: Self.alice, displayText: "Alice")
        let styled = HTMLToStyling.convert(html + ": hi", mention: { $0 == Self.alice ? "alice_nick" : nil })
        #expect(styled == StyledText(body: "alice_nick: hi", mentions: [Self.alice]))
    }

    @Test func formattedBodyPlainRest() throws {
        let body = "Alice: 1 < 2 & \"x\"\nsecond line"
        let mention = try #require(LeadingMention.find(in: body, nicks: ["Alice"]))
        #expect(MentionPill.formattedBody(body: body, mention: mention, user: Self.alice)
            == "<a href=\"https://matrix.to/#/@alice:example.org\">Alice</a>: 1 &lt; 2 &amp; &quot;x&quot;<br>second line")
    }

    @Test func formattedBodyStyledRest() throws {
        let body = "Alice: *hi*"
        let mention = try #require(LeadingMention.find(in: body, nicks: ["Alice"]))
        #expect(MentionPill.formattedBody(body: body, mention: mention, user: Self.alice)
            == "<a href=\"https://matrix.to/#/@alice:example.org\">Alice</a>: <strong>hi</strong>")
        #expect(MentionPill.formattedBody(body: body, mention: mention, user: Self.alice, unstyled: true)
            == "<a href=\"https://matrix.to/#/@alice:example.org\">Alice</a>: *hi*")
    }

    @Test func formattedBodyMultiLineStyling() throws {
        let body = "Alice, look:\n> quoted\n```\n<code>\n```\n_em_"
        let mention = try #require(LeadingMention.find(in: body, nicks: ["Alice"]))
        #expect(MentionPill.formattedBody(body: body, mention: mention, user: Self.alice)
            == "<a href=\"https://matrix.to/#/@alice:example.org\">Alice</a>, look:<blockquote>quoted</blockquote>"
            + "<pre><code>&lt;code&gt;</code></pre><em>em</em>")
    }

    @Test func formattedBodyDisplayTextAndCaseAsWritten() throws {
        let body = "ALICE: yo"
        let mention = try #require(LeadingMention.find(in: body, nicks: ["Alice"]))
        #expect(MentionPill.formattedBody(body: body, mention: mention, user: Self.alice)
            == "<a href=\"https://matrix.to/#/@alice:example.org\">ALICE</a>: yo")
        #expect(MentionPill.formattedBody(body: body, mention: mention, user: Self.alice, displayText: "Alice <A>")
            == "<a href=\"https://matrix.to/#/@alice:example.org\">Alice &lt;A&gt;</a>: yo")
    }

    @Test func formattedBodyHostileText() throws {
        let nick = "<script>😀 e\u{301}"
        let body = nick + ": </a><img src=x>\r\nline\rcr 𝄞"
        let mention = try #require(LeadingMention.find(in: body, nicks: [nick]))
        let html = MentionPill.formattedBody(body: body, mention: mention, user: Self.alice)
        #expect(html == "<a href=\"https://matrix.to/#/@alice:example.org\">&lt;script&gt;😀 e\u{301}</a>"
            + ": &lt;/a&gt;&lt;img src=x&gt;<br>line<br>cr 𝄞")
    }

    @Test func formattedBodyEmptyRestAndHugeRest() throws {
        let mention = try #require(LeadingMention.find(in: "Alice:", nicks: ["Alice"]))
        #expect(MentionPill.formattedBody(body: "Alice:", mention: mention, user: Self.alice)
            == "<a href=\"https://matrix.to/#/@alice:example.org\">Alice</a>:")
        let huge = "Alice: " + String(repeating: "<&", count: 200_000)
        let hugeMention = try #require(LeadingMention.find(in: huge, nicks: ["Alice"]))
        let html = MentionPill.formattedBody(body: huge, mention: hugeMention, user: Self.alice)
        #expect(html.hasSuffix(String(repeating: "&lt;&amp;", count: 200_000)))
    }
}
