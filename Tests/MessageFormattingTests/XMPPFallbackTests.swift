import MessageFormatting
import Testing

/// XEP-0428 fallback ranges count Unicode code points (XEP-0426) and may be anything on the wire.
@Suite struct XMPPFallbackTests {
    static func range(_ start: Int, _ end: Int) -> CodePointRange { CodePointRange(start: start, end: end) }

    @Test func replyFallbackExampleFromXEP0461() {
        let body = "> Anna wrote:\n> We should bake a cake\nGreat idea!"
        #expect(XMPPFallback.removing(ranges: [Self.range(0, 38)], from: body) == "Great idea!")
    }

    @Test func offsetsAreScalarsNotUTF16NorGraphemes() {
        // 😀 is 1 scalar, 2 UTF-16 units; e + U+0301 is 2 scalars, 1 grapheme; 👩‍👩‍👧 is 5 scalars, 1 grapheme.
        let body = "😀e\u{301}👩‍👩‍👧x"
        #expect(XMPPFallback.removing(ranges: [Self.range(0, 1)], from: body) == "e\u{301}👩‍👩‍👧x")
        #expect(XMPPFallback.removing(ranges: [Self.range(1, 3)], from: body) == "😀👩‍👩‍👧x")
        #expect(XMPPFallback.removing(ranges: [Self.range(3, 8)], from: body) == "😀e\u{301}x")
        #expect(XMPPFallback.removing(ranges: [Self.range(2, 3)], from: body) == "😀e👩‍👩‍👧x")
        #expect(XMPPFallback.removing(ranges: [Self.range(8, 9)], from: body) == "😀e\u{301}👩‍👩‍👧")
    }

    @Test func astralQuoteWithScalarCountedEnd() {
        let quote = "> 𝄞🎉:\n> 😀😀\n"
        let body = quote + "ok"
        #expect(quote.unicodeScalars.count == 11)
        #expect(quote.utf16.count == 15)
        #expect(XMPPFallback.removing(ranges: [Self.range(0, 11)], from: body) == "ok")
    }

    @Test func severalUnsortedOverlappingRanges() {
        let body = "0123456789"
        #expect(XMPPFallback.removing(ranges: [Self.range(7, 9), Self.range(1, 3), Self.range(2, 4)], from: body) == "04569")
    }

    @Test func clampingAndInvalidRanges() {
        let body = "abcdef"
        #expect(XMPPFallback.removing(ranges: [Self.range(-5, 2)], from: body) == "cdef")
        #expect(XMPPFallback.removing(ranges: [Self.range(4, 1000)], from: body) == "abcd")
        #expect(XMPPFallback.removing(ranges: [Self.range(4, 2)], from: body) == body)
        #expect(XMPPFallback.removing(ranges: [Self.range(3, 3)], from: body) == body)
        #expect(XMPPFallback.removing(ranges: [Self.range(10, 20)], from: body) == body)
        #expect(XMPPFallback.removing(ranges: [Self.range(-9, -1)], from: body) == body)
        #expect(XMPPFallback.removing(ranges: [Self.range(Int.min, Int.max)], from: body) == "")
        #expect(XMPPFallback.removing(ranges: [Self.range(0, 1), Self.range(5, 2), Self.range(5, 6)], from: body) == "bcde")
    }

    @Test func nilMeansWholeBodyAndEmptyMeansNothing() {
        #expect(XMPPFallback.removing(ranges: nil, from: "anything") == "")
        #expect(XMPPFallback.removing(ranges: [], from: "anything") == "anything")
        #expect(XMPPFallback.removing(ranges: [Self.range(0, 1)], from: "") == "")
        #expect(XMPPFallback.removing(ranges: nil, from: "") == "")
    }

    @Test func crlfCountsAsTwoScalars() {
        let body = "> a\r\nreply"
        #expect(body.count == 9)  // "\r\n" is one Character
        #expect(XMPPFallback.removing(ranges: [Self.range(0, 5)], from: body) == "reply")
        #expect(XMPPFallback.removing(ranges: [Self.range(0, 4)], from: body) == "\nreply")
    }

    @Test func hugeBodyManyRanges() {
        let body = String(repeating: "a😀", count: 200_000)
        let ranges = stride(from: 0, to: 400_000, by: 2).map { Self.range($0 + 1, $0 + 2) }.reversed()
        #expect(XMPPFallback.removing(ranges: Array(ranges), from: body) == String(repeating: "a", count: 200_000))
    }

    @Test func wireAttributes() {
        #expect(CodePointRange(startAttribute: "0", endAttribute: "12") == Self.range(0, 12))
        #expect(CodePointRange(startAttribute: nil, endAttribute: nil) == Self.range(0, Int.max))
        #expect(CodePointRange(startAttribute: "3", endAttribute: nil) == Self.range(3, Int.max))
        #expect(CodePointRange(startAttribute: nil, endAttribute: "3") == Self.range(0, 3))
        #expect(CodePointRange(startAttribute: "-2", endAttribute: "3") == Self.range(-2, 3))
        for bad in ["", "abc", "1e3", "+1", " 1", "1 ", "0x10", "-", "99999999999999999999999", "١"] {
            #expect(CodePointRange(startAttribute: bad, endAttribute: "3") == nil)
            #expect(CodePointRange(startAttribute: "0", endAttribute: bad) == nil)
        }
    }

    @Test func normalizedRanges() {
        let ranges = CodePointRanges([Self.range(5, 7), Self.range(0, 2), Self.range(2, 3), Self.range(6, 100), Self.range(9, 1)], scalarCount: 8)
        #expect(ranges.ranges == [0..<3, 5..<8])
        #expect(ranges.contains(0) && ranges.contains(2) && !ranges.contains(3) && ranges.contains(7) && !ranges.contains(8))
        #expect(CodePointRanges([Self.range(0, 5)], scalarCount: 0).ranges == [])
        #expect(CodePointRanges([Self.range(0, 5)], scalarCount: -3).ranges == [])
    }
}
