/// Hexadecimal digits as bytes, shared by the escaping codecs. Pure.
package enum HexDigit {
    /// The value of an ASCII hex digit; upper-case digits count only when `acceptingUppercase`
    /// (the ghost codec emits lower case only, so a round trip must reject anything else).
    package static func value(_ byte: UInt8, acceptingUppercase: Bool) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F") where acceptingUppercase: byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
