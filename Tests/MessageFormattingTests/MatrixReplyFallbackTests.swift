import MessageFormatting
import Testing

/// The legacy Matrix rich-reply fallback (client-server API "Rich replies › Fallbacks", as sent before v1.13) is
/// removed from both bodies, and nothing else is.
@Suite struct MatrixReplyFallbackTests {
    static let specBody = "> <@alice:example.org> This is the original body\n\nThis is where the reply goes"
    static let specHTML = "<mx-reply><blockquote><a href=\"https://matrix.to/#/!somewhere:example.org/$event:example.org\">"
        + "In reply to</a> <a href=\"https://matrix.to/#/@alice:example.org\">@alice:example.org</a><br />"
        + "This is the original body</blockquote></mx-reply>This is where the reply goes"

    @Test func specExampleIsStripped() {
        let stripped = MatrixReplyFallback.strip(body: Self.specBody, formattedBody: Self.specHTML)
        #expect(stripped.body == "This is where the reply goes")
        #expect(stripped.formattedBody == "This is where the reply goes")
    }

    @Test func multiLineQuoteAndEmoteFallback() {
        let body = "> * <@alice:example.org> waves\n> and says\n>\n> hi\n\nback at you\n\nsecond paragraph"
        let stripped = MatrixReplyFallback.strip(body: body, formattedBody: "<mx-reply>x</mx-reply><b>back</b>")
        #expect(stripped.body == "back at you\n\nsecond paragraph")
        #expect(stripped.formattedBody == "<b>back</b>")
    }

    @Test func onlyOneBlankLineIsRemoved() {
        let stripped = MatrixReplyFallback.strip(body: "> <@a:b> x\n\n\nreply", formattedBody: "<mx-reply></mx-reply>r")
        #expect(stripped.body == "\nreply")
    }

    @Test func replyWithoutBlankLineKeepsItsFirstLine() {
        let stripped = MatrixReplyFallback.strip(body: "> <@a:b> x\nreply\n> own quote", formattedBody: "<mx-reply>q</mx-reply>r")
        #expect(stripped.body == "reply\n> own quote")
    }

    @Test func ownQuoteAfterTheFallbackStays() {
        let stripped = MatrixReplyFallback.strip(body: "> <@a:b> x\n\n> my own quote\nreply", formattedBody: "<mx-reply>q</mx-reply>r")
        #expect(stripped.body == "> my own quote\nreply")
    }

    @Test func crlfBodies() {
        let stripped = MatrixReplyFallback.strip(body: "> <@a:b> x\r\n> y\r\n\r\nreply\r\nmore", formattedBody: "<mx-reply>q</mx-reply>r")
        #expect(stripped.body == "reply\r\nmore")
    }

    @Test func leadingWhitespaceAndCaseAndAttributes() {
        let html = " \n\t<MX-Reply class=\"x\"><blockquote>q</blockquote></mx-REPLY >after"
        #expect(MatrixReplyFallback.strip(body: "b", formattedBody: html).formattedBody == "after")
    }

    @Test func nestedReplyElementsAreBalanced() {
        let html = "<mx-reply><blockquote><mx-reply>inner</mx-reply>outer</blockquote></mx-reply>reply"
        #expect(MatrixReplyFallback.strip(body: "b", formattedBody: html).formattedBody == "reply")
    }

    @Test func lookalikeTagsDoNotCount() {
        let html = "<mx-reply><mx-replyx>a</mx-replyx></mx-replyz></mx-reply>reply"
        #expect(MatrixReplyFallback.strip(body: "b", formattedBody: html).formattedBody == "reply")
    }

    @Test(arguments: [
        "plain <mx-reply>q</mx-reply>",  // not at the start
        "<p><mx-reply>q</mx-reply></p>",  // not at the start either
        "<mx-reply>never closed",  // unclosed: no fallback
        "<mx-reply",  // truncated opening tag
        "<mx-replyx>q</mx-replyx>",  // another element
        "<mx-reply>q</mx-reply",  // truncated closing tag
        "",
    ])
    func withoutALeadingClosedReplyNothingChanges(html: String) {
        let body = "> <@alice:example.org> quote\n\nreply"
        let stripped = MatrixReplyFallback.strip(body: body, formattedBody: html)
        #expect(stripped.body == body)
        #expect(stripped.formattedBody == html)
    }

    @Test func withoutFormattedBodyAUsersOwnQuoteStays() {
        let body = "> <@alice:example.org> said this\n\nand I agree"
        let stripped = MatrixReplyFallback.strip(body: body, formattedBody: nil)
        #expect(stripped.body == body)
        #expect(stripped.formattedBody == nil)
    }

    @Test(arguments: [
        "> my own quote\n\nreply",  // not "> <": not a fallback body
        "> <@a:b> a single line",  // no second line (mautrix keeps it too)
        "plain reply",
        "",
    ])
    func bodyWithoutFallbackShapeStays(body: String) {
        let stripped = MatrixReplyFallback.strip(body: body, formattedBody: "<mx-reply>q</mx-reply>reply")
        #expect(stripped.body == body)
        #expect(stripped.formattedBody == "reply")
    }

    @Test func bodyThatIsOnlyQuoteBecomesEmpty() {
        #expect(MatrixReplyFallback.strip(body: "> <@a:b> x\n> y", formattedBody: "<mx-reply>q</mx-reply>").body == "")
        #expect(MatrixReplyFallback.strip(body: "> <@a:b> x\n> y\n", formattedBody: "<mx-reply>q</mx-reply>").body == "")
        #expect(MatrixReplyFallback.strip(body: "> <@a:b> x\n  ", formattedBody: "<mx-reply>q</mx-reply>").body == "")
    }

    @Test func unicodeAroundTheFallback() {
        let body = "> <@a:b> 👩‍👩‍👧 e\u{301}\n\n🎉 cafe\u{301} 𝄞"
        let html = "<mx-reply>👩‍👩‍👧 é</mx-reply>🎉 <i>cafe\u{301}</i> 𝄞"
        let stripped = MatrixReplyFallback.strip(body: body, formattedBody: html)
        #expect(stripped.body == "🎉 cafe\u{301} 𝄞")
        #expect(stripped.formattedBody == "🎉 <i>cafe\u{301}</i> 𝄞")
    }

    @Test func hugeInputsAreLinear() {
        let quoted = String(repeating: "> line of quote\n", count: 100_000)
        let body = "> <@a:b> start\n" + quoted + "\nreply"
        let html = "<mx-reply>" + String(repeating: "<b>x</b><i>", count: 100_000) + "</mx-reply>reply"
        let stripped = MatrixReplyFallback.strip(body: body, formattedBody: html)
        #expect(stripped.body == "reply")
        #expect(stripped.formattedBody == "reply")
        let unclosed = "<mx-reply>" + String(repeating: "<mx-reply>", count: 100_000)
        #expect(MatrixReplyFallback.strip(body: body, formattedBody: unclosed).body == body)
    }

    @Test func strippedReplyConvertsWithoutMatrixIDs() {
        let stripped = MatrixReplyFallback.strip(body: Self.specBody, formattedBody: Self.specHTML)
        let styled = HTMLToStyling.convert(stripped.formattedBody ?? "", mention: { _ in nil })
        #expect(styled.body == "This is where the reply goes")
    }
}
