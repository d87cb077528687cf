/// Incremental UTF-8 validation (Unicode 15, Table 3-7: no overlongs, no surrogates, nothing above U+10FFFF) that
/// carries a partial sequence from one chunk to the next.
///
/// The stream parser runs it before libxml2, whose own reports of bad UTF-8 depend on where the chunks were cut.
/// Pure value type, no I/O.
struct UTF8Validator {
    /// Continuation bytes still expected by the current sequence.
    private var remaining = 0
    /// The allowed range of the next continuation byte (narrower than 80...BF right after E0, ED, F0, F4).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// Checks `bytes`; returns the offset of the first byte that cannot be part of valid UTF-8, or nil.
    mutating func firstInvalidOffset(in bytes: UnsafeRawBufferPointer) -> Int? {
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if remaining == 0 {
                if byte < 0x80 {
                    index += 1
                    continue
                }
                switch byte {
                case 0xC2...0xDF: begin(1, 0x80, 0xBF)
                case 0xE0: begin(2, 0xA0, 0xBF)
                case 0xE1...0xEC, 0xEE...0xEF: begin(2, 0x80, 0xBF)
                case 0xED: begin(2, 0x80, 0x9F)
                case 0xF0: begin(3, 0x90, 0xBF)
                case 0xF1...0xF3: begin(3, 0x80, 0xBF)
                case 0xF4: begin(3, 0x80, 0x8F)
                default: return index
                }
            } else {
                guard byte >= lower, byte <= upper else { return index }
                remaining -= 1
                lower = 0x80
                upper = 0xBF
            }
            index += 1
        }
        return nil
    }

    private mutating func begin(_ continuationBytes: Int, _ low: UInt8, _ high: UInt8) {
        remaining = continuationBytes
        lower = low
        upper = high
    }
}
