import MessageFormatting
import Testing

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
