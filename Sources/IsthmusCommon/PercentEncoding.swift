/// Percent-encoding of URL path segments and query values (RFC 3986 §2.1). Pure.
///
/// Encoding keeps only the unreserved characters (`A-Z a-z 0-9 - . _ ~`), so room ids (`!x:y`), event ids (`$…`),
/// user ids (`@…:…`), aliases (`#…`) and transaction ids with `/` survive as one segment.
public enum PercentEncoding {
    /// `text` with every byte outside the unreserved set written as `%XX` (upper-case hex).
    public static func encode(_ text: String) -> String {
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0f)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

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
