/// A reversible mapping from any string to Matrix localpart characters: the spec's "Mapping from other character
/// sets" (appendices §4.2.1.1). Pure.
///
/// Over the UTF-8 bytes: `a-z 0-9 . - /` stay; `A-Z` become `_` + lower case; `_` becomes `__`; every other byte
/// (including `=` and `+`) becomes `=` + two lower-case hex digits. `Alice@Example.org/Ph` → `_alice=40_example.org/_ph`.
/// The output therefore never contains `==`, which ``GhostNamespace`` uses to mark its hashed long form.
public enum GhostLocalpartCodec {
    /// The escaped form of `text`; always valid localpart characters.
    public static func encode(_ text: String) -> String {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "/"):
                output.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                output.append(UInt8(ascii: "_"))
                output.append(byte + 32)
            case UInt8(ascii: "_"):
                output.append(UInt8(ascii: "_"))
                output.append(UInt8(ascii: "_"))
            default:
                output.append(UInt8(ascii: "="))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0f)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The original of an escaped `localpart`; nil unless `localpart` is exactly what ``encode(_:)`` produces for
    /// some string (so every decodable localpart has one canonical original).
    public static func decode(_ localpart: some StringProtocol) -> String? {
        decodeBytes(localpart).flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// The original bytes of an escaped `localpart`, without requiring them to be UTF-8: the hashed long form of
    /// ``GhostNamespace`` keeps a head of the escaped identity that may end inside a multi-byte character.
    /// Nil unless every escape is canonical (as in ``decode(_:)``).
    public static func decodeBytes(_ localpart: some StringProtocol) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = localpart.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "/"):
                bytes.append(byte)
            case UInt8(ascii: "_"):
                guard let next = iterator.next() else { return nil }
                if next == UInt8(ascii: "_") {
                    bytes.append(next)
                } else if (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(next) {
                    bytes.append(next - 32)
                } else {
                    return nil
                }
            case UInt8(ascii: "="):
                guard let high = iterator.next().flatMap({ HexDigit.value($0, acceptingUppercase: false) }), let low = iterator.next().flatMap({ HexDigit.value($0, acceptingUppercase: false) }) else { return nil }
                let value = high << 4 | low
                guard !isLiteral(value) else { return nil }  // a byte encode() would have kept or `_`-escaped
                bytes.append(value)
            default:
                return nil
            }
        }
        return bytes
    }

    private static func isLiteral(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "/"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
