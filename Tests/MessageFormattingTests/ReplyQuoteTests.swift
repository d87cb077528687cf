import MessageFormatting
import Testing

/// The quoted reply fallback for XMPP clients without XEP-0461, and its XEP-0428 range in code points.
@Suite struct ReplyQuoteTests {
    @Test func slixmppShape() {
        let quote = ReplyQuote.make(nick: "Anna", excerpt: "We should bake a cake")
        #expect(quote.text == "> Anna:\n> We should bake a cake\n")
        #expect(quote.range == 0..<32)
        let body = quote.text + "Great idea!"
        #expect(XMPPFallback.removing(ranges: [CodePointRange(start: quote.range.lowerBound, end: quote.range.upperBound)], from: body) == "Great idea!")
    }

    @Test func linesAreTrimmedBlankOnesSkippedAndEachQuoted() {
        let quote = ReplyQuote.make(nick: "Bob", excerpt: "  first  \n\n\t\nsecond\r\nthird ")
        #expect(quote.text == "> Bob:\n> first\n> second\n> third\n")
    }

    @Test func moreThanThreeLinesAreCut() {
        let quote = ReplyQuote.make(nick: "Bob", excerpt: "1\n2\n3\n4\n5")
        #expect(quote.text == "> Bob:\n> 1\n> 2\n> 3…\n")
    }

    @Test func longTextIsCutAt200Scalars() {
        let quote = ReplyQuote.make(nick: "N", excerpt: String(repeating: "a", count: 500))
        #expect(quote.text == "> N:\n> " + String(repeating: "a", count: 200) + "…\n")
        let exact = ReplyQuote.make(nick: "N", excerpt: String(repeating: "a", count: 200))
        #expect(exact.text == "> N:\n> " + String(repeating: "a", count: 200) + "\n")
    }

    @Test func budgetSpansLines() {
        let line = String(repeating: "b", count: 150)
        let quote = ReplyQuote.make(nick: "N", excerpt: line + "\n" + line)
        #expect(quote.text == "> N:\n> " + line + "\n> " + String(repeating: "b", count: 50) + "…\n")
    }

    @Test func cutKeepsGraphemeClustersWhole() {
        // Each family emoji is 5 scalars: 40 of them fill exactly 200, the 41st would not fit.
        let family = "👩‍👩‍👧"
        let quote = ReplyQuote.make(nick: "N", excerpt: String(repeating: family, count: 41))
        #expect(quote.text == "> N:\n> " + String(repeating: family, count: 40) + "…\n")
        // 199 letters then e + U+0301: the accent is not split from its letter.
        let accented = ReplyQuote.make(nick: "N", excerpt: String(repeating: "x", count: 199) + "e\u{301}")
        #expect(accented.text == "> N:\n> " + String(repeating: "x", count: 199) + "…\n")
    }

    @Test func rangeCountsScalars() {
        let quote = ReplyQuote.make(nick: "😀 Zoë", excerpt: "𝄞 e\u{301}")
        #expect(quote.text == "> 😀 Zoë:\n> 𝄞 e\u{301}\n")
        #expect(quote.range == 0..<quote.text.unicodeScalars.count)
        #expect(quote.range.upperBound == 16)
        #expect(quote.text.utf16.count == 18)
    }

    @Test func hostileNickCannotBreakOutOfTheQuote() {
        let quote = ReplyQuote.make(nick: "evil\nnot quoted\r\nreally\u{2028}x", excerpt: "a\u{2028}b\rc")
        #expect(quote.text == "> evil not quoted  really x:\n> a\n> b\n> c\n")
        for line in quote.text.split(separator: "\n") { #expect(line.hasPrefix("> ")) }
    }

    @Test func emptyInputs() {
        #expect(ReplyQuote.make(nick: "", excerpt: "") == ("", 0..<0))
        #expect(ReplyQuote.make(nick: "", excerpt: " \n\n ").text == "")
        #expect(ReplyQuote.make(nick: "N", excerpt: "").text == "> N:\n")
        #expect(ReplyQuote.make(nick: "", excerpt: "hi").text == "> hi\n")
    }

    @Test func aSingleHugeClusterIsOnlyAnEllipsis() {
        let zalgo = "a" + String(repeating: "\u{301}", count: 300)
        #expect(ReplyQuote.make(nick: "N", excerpt: zalgo).text == "> N:\n> …\n")
    }

    @Test func hugeExcerptIsCheap() {
        let excerpt = String(repeating: "line with some words 😀\n", count: 100_000)
        let quote = ReplyQuote.make(nick: "N", excerpt: excerpt)
        #expect(quote.text == "> N:\n> line with some words 😀\n> line with some words 😀\n> line with some words 😀…\n")
    }

    @Test func quotedStylingStaysInsideTheQuote() {
        let quote = ReplyQuote.make(nick: "N", excerpt: "```\ncode\n> nested")
        #expect(quote.text == "> N:\n> ```\n> code\n> > nested\n")
    }
}
