import Media
import Testing

@Suite struct ByteRangeTests {
    @Test func singleRangesAreServed() {
        #expect(ByteRange.parse("bytes=0-99", length: 1000) == .part(ByteRange(first: 0, last: 99)))
        #expect(ByteRange.parse("bytes=500-", length: 1000) == .part(ByteRange(first: 500, last: 999)))
        #expect(ByteRange.parse("bytes=-100", length: 1000) == .part(ByteRange(first: 900, last: 999)))
        #expect(ByteRange.parse("bytes=-5000", length: 1000) == .part(ByteRange(first: 0, last: 999)))
        #expect(ByteRange.parse("bytes=990-2000", length: 1000) == .part(ByteRange(first: 990, last: 999)))
        #expect(ByteRange.parse(" Bytes = 1-1 ", length: 10) == .whole, "spaces around '=' are not in the grammar")
        #expect(ByteRange.parse("bytes= 1-1", length: 10) == .part(ByteRange(first: 1, last: 1)))
    }

    @Test func unsatisfiableRangesAre416() {
        #expect(ByteRange.parse("bytes=1000-", length: 1000) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=-0", length: 1000) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=0-", length: 0) == .unsatisfiable)
    }

    @Test func otherHeadersGetTheWholeFile() {
        #expect(ByteRange.parse(nil, length: 10) == .whole)
        #expect(ByteRange.parse("bytes=0-1,3-4", length: 10) == .whole)
        #expect(ByteRange.parse("items=0-1", length: 10) == .whole)
        #expect(ByteRange.parse("bytes=5-2", length: 10) == .whole)
        #expect(ByteRange.parse("bytes=a-b", length: 10) == .whole)
        #expect(ByteRange.parse("bytes=-", length: 10) == .whole)
        #expect(ByteRange.parse("bytes=99999999999999999999-", length: 10) == .whole)
    }
}
