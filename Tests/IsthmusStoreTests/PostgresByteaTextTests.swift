@testable import IsthmusStore
import Testing

/// bytea's text output, both formats (PostgreSQL 8.4), pure.
@Suite struct PostgresByteaTextTests {
    private func decode(_ text: String) -> [UInt8]? {
        Array(text.utf8).withUnsafeBufferPointer { PostgresByteaText.decode($0) }
    }

    @Test func hexFormat() {
        #expect(decode(#"\x"#) == [])
        #expect(decode(#"\x00ff7F"#) == [0x00, 0xff, 0x7f])
        #expect(decode(#"\x0"#) == nil)
        #expect(decode(#"\xzz"#) == nil)
    }

    @Test func escapeFormat() {
        #expect(decode("") == [])
        #expect(decode(#"ab\000\\\377"#) == [0x61, 0x62, 0x00, 0x5c, 0xff])
        #expect(decode(#"\400"#) == nil)
        #expect(decode(#"\9"#) == nil)
        #expect(decode(#"trailing\"#) == nil)
    }
}
