import MessageFormatting
import Testing

/// Excerpts of hostile size: only their start is read.
@Suite struct ReplyQuoteHugeTests {
    @Test func hugeSingleLineAndHugeWhitespace() {
        let quote = ReplyQuote.make(nick: "N", excerpt: String(repeating: "é😀", count: 500_000))
        #expect(quote.text == "> N:\n> " + String(repeating: "é😀", count: 100) + "…\n")
        #expect(ReplyQuote.make(nick: "N", excerpt: String(repeating: " \n\t", count: 300_000)).text == "> N:\n")
    }

    @Test func exactlyThreeLinesAreNotCut() {
        #expect(ReplyQuote.make(nick: "N", excerpt: "1\n2\n3\n\n  \n").text == "> N:\n> 1\n> 2\n> 3\n")
    }
}
