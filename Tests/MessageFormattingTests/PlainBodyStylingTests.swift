import MessageFormatting
import Testing

/// Whether a Matrix plain body needs `<unstyled/>` so that XMPP clients show it literally (XEP-0393).
@Suite struct PlainBodyStylingTests {
    @Test(arguments: [
        "*bold*", "use _this_ one", "~gone~", "`code`", "> a quote", ">no space quote", "```\ncode\n```",
        "```unclosed", "a\n> quote on line 2", "x *y* z", "😀 *🎉* 😀", "*e\u{301}*",
    ])
    func styled(body: String) {
        #expect(PlainBodyStyling.needsUnstyled(body))
        #expect(StylingToHTML.convert(body) != nil)
    }

    @Test(arguments: [
        "", "plain text", "2 * 3 * 4", "snake_case_name", "a ~ b", "**", "****", "*not strong", "not strong*",
        "* item", "*not \n strong*", "a > b", " > not at line start", "x`y", "😀 👩‍👩‍👧 e\u{301}", "\r\n\r\n",
        "path/to_file_name_", "5*3*2",
    ])
    func notStyled(body: String) {
        #expect(!PlainBodyStyling.needsUnstyled(body))
        #expect(StylingToHTML.convert(body) == nil)
    }

    @Test func hugeBodies() {
        #expect(!PlainBodyStyling.needsUnstyled(String(repeating: "plain words ", count: 200_000)))
        #expect(!PlainBodyStyling.needsUnstyled(String(repeating: "2 * 3 ", count: 200_000)))
        #expect(PlainBodyStyling.needsUnstyled(String(repeating: "2 * 3 ", count: 200_000) + "\n> q"))
        #expect(PlainBodyStyling.needsUnstyled(String(repeating: "*a* ", count: 200_000)))
    }
}
