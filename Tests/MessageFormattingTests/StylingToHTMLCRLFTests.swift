import MessageFormatting
import Testing

/// CRLF line ends ("\r\n" is a single Swift Character) read like LF line ends.
@Suite struct StylingToHTMLCRLFTests {
    @Test func aPreformattedBlockWithCRLFKeepsItsText() {
        #expect(StylingToHTML.convert("```\r\ncode\r\n```") == StylingToHTML.convert("```\ncode\n```"))
        #expect(StylingToHTML.convert("```\r\ncode\r\n```")?.contains("code") == true)
    }

    @Test func aQuoteAfterACRLFIsAQuote() {
        #expect(StylingToHTML.convert("a\r\n> b") == StylingToHTML.convert("a\n> b"))
        #expect(StylingToHTML.convert("a\r\n> b")?.contains("<blockquote>") == true)
    }
}
