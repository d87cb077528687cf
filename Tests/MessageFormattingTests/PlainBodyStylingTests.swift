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

/// Line breaks written as CR LF or CR: an XMPP client may see separate lines there, so styling that needs a line
/// start counts too.
@Suite struct PlainBodyStylingLineBreakTests {
    @Test(arguments: ["a\r\n> quote", "a\r> quote", "a\r\n```\r\ncode", "*a*\r\n", "\r\n`x`"])
    func crlfLinesAreLines(body: String) {
        #expect(PlainBodyStyling.needsUnstyled(body))
    }

    @Test(arguments: ["a\r\nb", "\r\r\n\n", "a >\r\nb", "2 * 3\r\n4 * 5"])
    func crlfWithoutStyling(body: String) {
        #expect(!PlainBodyStyling.needsUnstyled(body))
    }

    @Test func aSpanDoesNotCrossACRLF() {
        // XEP-0393: spans never cross lines, and "\r\n" ends a line like "\n".
        #expect(StylingToHTML.convert("a *b\r\nc* d") == nil)
    }
}
