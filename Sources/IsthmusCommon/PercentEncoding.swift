/// Percent-encoding of URL path segments and query values (RFC 3986 §2.1). Pure.
///
/// Encoding keeps only the unreserved characters (`A-Z a-z 0-9 - . _ ~`), so room ids (`!x:y`), event ids (`$…`),
/// user ids (`@…:…`), aliases (`#…`) and transaction ids with `/` survive as one segment.
public enum PercentEncoding {
    /// `text` with every byte outside the unreserved set written as `%XX` (upper-case hex).
    /// Written into the string's own storage (one allocation; none when nothing needs escaping): request paths are
    /// built for every Matrix call (issue 26).
    public static func encode(_ text: String) -> String {
        let escapes = text.utf8.reduce(0) { $0 + (isUnreserved($1) ? 0 : 1) }
        guard escapes > 0 else { return text }
        return String(unsafeUninitializedCapacity: text.utf8.count + 2 * escapes) { output in
            var index = 0
            for byte in text.utf8 {
                if isUnreserved(byte) {
                    output[index] = byte
                    index += 1
                } else {
                    output[index] = UInt8(ascii: "%")
                    output[index + 1] = upperHexDigits[Int(byte >> 4)]
                    output[index + 2] = upperHexDigits[Int(byte & 0x0f)]
                    index += 3
                }
            }
            return index
        }
    }

    private static let upperHexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Decodes `%XX` escapes; nil when an escape is malformed or the bytes are not UTF-8.
    /// `+` stays `+` (it means space only in form bodies, which Matrix does not use).
    public static func decode(_ text: some StringProtocol) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap({ HexDigit.value($0, acceptingUppercase: true) }), let low = iterator.next().flatMap({ HexDigit.value($0, acceptingUppercase: true) }) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
