/// Escapes character data and attribute values for XML 1.0. Pure functions, no I/O.
///
/// - `&`, `<`, `>` become entities everywhere; in attribute values also `'` and `"` (we quote with `'`).
/// - CR is written as `&#xD;` (text and attributes) and, in attribute values, TAB and LF as `&#x9;`/`&#xA;`, so the
///   receiver's line-end and attribute-value normalisation give back exactly the string we sent.
/// - Characters XML 1.0 forbids (C0 controls other than TAB, LF, CR; U+FFFE, U+FFFF) cannot be sent at all,
///   not even as character references. They are replaced by U+FFFD REPLACEMENT CHARACTER, so the message still
///   goes through and the reader sees that something was there (dropping them silently would hide it; refusing
///   would lose the whole message for one stray control byte).
public enum XMLEscaping {
    /// The bytes of U+FFFD, written in place of forbidden characters.
    static let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]

    /// Appends `text` escaped as character data.
    public static func appendText(_ text: String, to buffer: inout [UInt8]) {
        append(text, to: &buffer, inAttribute: false)
    }

    /// Appends `value` escaped for a single-quoted attribute value.
    public static func appendAttributeValue(_ value: String, to buffer: inout [UInt8]) {
        append(value, to: &buffer, inAttribute: true)
    }

    /// `text` escaped as character data (for tests and logs).
    public static func escapedText(_ text: String) -> String {
        var buffer: [UInt8] = []
        appendText(text, to: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Whether XML 1.0 allows `scalar` in a document (production `Char`).
    public static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    private static func append(_ string: String, to buffer: inout [UInt8], inAttribute: Bool) {
        let utf8 = string.utf8
        // Fast path: nothing to escape.
        if !utf8.contains(where: { needsWork($0) }) {
            buffer.append(contentsOf: utf8)
            return
        }
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            switch byte {
            case UInt8(ascii: "&"): buffer.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): buffer.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): buffer.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "'") where inAttribute: buffer.append(contentsOf: "&apos;".utf8)
            case UInt8(ascii: "\"") where inAttribute: buffer.append(contentsOf: "&quot;".utf8)
            case 0x0D: buffer.append(contentsOf: "&#xD;".utf8)
            case 0x0A where inAttribute: buffer.append(contentsOf: "&#xA;".utf8)
            case 0x09 where inAttribute: buffer.append(contentsOf: "&#x9;".utf8)
            case 0x09, 0x0A: buffer.append(byte)
            case 0x00..<0x20: buffer.append(contentsOf: replacement)
            case 0xEF:
                // U+FFFE and U+FFFF are EF BF BE / EF BF BF in UTF-8.
                let next = utf8.index(after: index)
                if next != utf8.endIndex, utf8[next] == 0xBF, utf8.index(after: next) != utf8.endIndex,
                   utf8[utf8.index(after: next)] >= 0xBE {
                    buffer.append(contentsOf: replacement)
                    index = utf8.index(after: utf8.index(after: next))
                    continue
                }
                buffer.append(byte)
            default: buffer.append(byte)
            }
            index = utf8.index(after: index)
        }
    }

    @inline(__always)
    private static func needsWork(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "&") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">")
            || byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") || byte == 0xEF
    }
}
