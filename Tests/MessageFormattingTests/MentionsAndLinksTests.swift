import IsthmusCommon
import MessageFormatting
import Testing

/// Links and pills: what may be shown, and that a Matrix id taken from a link target never reaches the XMPP body.
@Suite struct MentionsAndLinksTests {
    static let alice = UserID("@alice:example.org")!
    static let bob = UserID("@bob:example.org")!

    /// Nicks the bridge would pass: only Alice has one.
    static func nick(_ user: UserID) -> String? { user == alice ? "alice_in_muc" : nil }

    @Test func pillBecomesTheNickAndIsListed() {
        let styled = HTMLToStyling.convert("<a href=\"https://matrix.to/#/@alice:example.org\">Alice</a>: hi", mention: Self.nick)
        #expect(styled == StyledText(body: "alice_in_muc: hi", mentions: [Self.alice]))
    }

    @Test func pillWithoutNickKeepsItsText() {
        let styled = HTMLToStyling.convert("hi <a href=\"https://matrix.to/#/@bob:example.org\">Bob <b>B</b></a>!", mention: Self.nick)
        #expect(styled == StyledText(body: "hi Bob *B*!", mentions: [Self.bob]))
    }

    @Test func pillFormsAndDuplicates() {
        let html = "<a href=\"https://matrix.to/#/%40bob%3Aexample.org?via=example.org\">B</a> "
            + "<a href=\"matrix:u/alice:example.org?action=chat\">A</a> "
            + "<a href=\"HTTPS://MATRIX.TO/#/@bob:example.org\">again</a>"
        let styled = HTMLToStyling.convert(html, mention: Self.nick)
        #expect(styled == StyledText(body: "B alice_in_muc again", mentions: [Self.bob, Self.alice]))
    }

    @Test func pillShowingItsIdKeepsItOnlyBecauseItIsVisible() {
        let html = "<a href=\"https://matrix.to/#/@bob:example.org\">@bob:example.org</a>"
        #expect(HTMLToStyling.convert(html, mention: Self.nick).body == "@bob:example.org")
        let named = "<a href=\"https://matrix.to/#/@alice:example.org\">@alice:example.org</a>"
        #expect(HTMLToStyling.convert(named, mention: Self.nick).body == "alice_in_muc")
    }

    @Test(arguments: [
        ("<a href=\"https://matrix.to/#/#room:example.org\">the room</a>", "the room"),
        ("<a href=\"https://matrix.to/#/!abc:example.org/$ev3nt?via=example.org\">this message</a>", "this message"),
        ("<a href=\"https://matrix.to/#/!abc:example.org\"></a>x", "x"),
        ("<a href=\"matrix:r/room:example.org\">r</a>", "r"),
        ("<a href=\"mxc://example.org/abcdef\">file</a>", "file"),
        ("<a href=\"https://example.com/profile/@alice:example.org\">profile</a>", "profile"),
        ("<a href=\"https://example.com/%40alice%3Aexample.org\">encoded</a>", "encoded"),
        ("<a href=\"https://app.element.io/#/room/#room:example.org\">element</a>", "element"),
        ("<a href=\"https://example.com/e/$AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg\">event</a>", "event"),
        ("<a href=\"https://matrix.to/#/@alice:example.org\">Alice</a>", "Alice"),
    ])
    func matrixTargetsShowOnlyTheirText(html: String, body: String) {
        let styled = HTMLToStyling.convert(html) { _ in nil }
        #expect(styled.body == body)
        for leak in ["example.org", "mxc:", "$ev3nt", "$AbCd", "matrix.to", "matrix:"] {
            #expect(!styled.body.contains(leak), "\(leak) leaked from \(html)")
        }
    }

    @Test(arguments: [
        ("<a href=\"https://example.com\">Example</a>", "Example <https://example.com>"),
        ("<a href=\"https://example.com\">https://example.com</a>", "https://example.com"),
        ("<a href=\"https://example.com/\">example.com</a>", "https://example.com/"),
        ("<a href=\"mailto:a@example.com\">a@example.com</a>", "mailto:a@example.com"),
        ("<a href=\" https://example.com/a?b=1&amp;c=2 \">https://example.com/a?b=1&amp;c=2</a>", "https://example.com/a?b=1&c=2"),
        ("a<a href=\"https://example.com\"> </a>b", "a b"),
        ("<a href=\"https://example.com\"><img src=\"mxc://example.org/logo\" alt=\"logo\"></a>", "logo <https://example.com>"),
        ("see <b><a href=\"https://example.com\">this</a></b>.", "see *this <https://example.com>*."),
        ("<a href=\"javascript:alert(1)\">click</a>", "click <javascript:alert(1)>"),
        ("<a href=\"JaVaScRiPt:alert(document.cookie)\">JaVaScRiPt:alert(document.cookie)</a>", "JaVaScRiPt:alert(document.cookie)"),
        ("<a href=\"data:text/html,&lt;script&gt;x&lt;/script&gt;\">d</a>", "d <data:text/html,<script>x</script>>"),
        ("<a>no href</a>", "no href"),
    ])
    func externalLinksShowTheirTargetAsText(html: String, body: String) {
        #expect(HTMLToStyling.convert(html) { _ in nil } == StyledText(body: body))
    }
}
