/// Base64 as Matrix writes it: the standard alphabet (RFC 4648 §4) without `=` padding (Matrix spec, Appendices,
/// "Unpadded Base64"). Pure functions.
///
/// Hand-written rather than Foundation's `Data(base64Encoded:)` because keys, ratchet states and exported sessions pass
/// through it: a table lookup indexed by secret characters, or a branch per character class, leaks them through the
/// cache or the branch predictor. That is the class of libolm's CVE-2024-45192. Here every character is mapped with
/// the same arithmetic whatever its value, and an invalid character only sets a flag that is checked once at the end;
/// time depends on the length alone (and on where padding starts, which is public).
public enum UnpaddedBase64 {
    /// `bytes` in unpadded standard base64.
    public static func encode(_ bytes: [UInt8]) -> String {
        var output = [UInt8]()
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let group = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            output += [character(group >> 18), character(group >> 12 & 63), character(group >> 6 & 63), character(group & 63)]
            index += 3
        }
        switch bytes.count - index {
        case 1:
            let group = Int(bytes[index]) << 16
            output += [character(group >> 18), character(group >> 12 & 63)]
        case 2:
            let group = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8
            output += [character(group >> 18), character(group >> 12 & 63), character(group >> 6 & 63)]
        default:
            break
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes unpadded standard base64; correct `=` padding is accepted too. Refuses (with `invalidBase64`) any
    /// character outside the alphabet, a length that cannot come from whole bytes, and non-zero leftover bits, so each
    /// byte string has exactly one accepted encoding.
    public static func decode(_ text: String) throws -> [UInt8] {
        var characters = Array(text.utf8)
        if characters.count % 4 == 0, characters.last == UInt8(ascii: "=") {
            characters.removeLast()
            if characters.last == UInt8(ascii: "=") { characters.removeLast() }
        }
        let remainder = characters.count % 4
        guard remainder != 1 else { throw MatrixCryptoError.invalidBase64 }
        var output = [UInt8]()
        output.reserveCapacity(characters.count * 3 / 4)
        var invalid = 0
        var index = 0
        while index + 4 <= characters.count {
            let a = value(characters[index]), b = value(characters[index + 1])
            let c = value(characters[index + 2]), d = value(characters[index + 3])
            invalid |= a | b | c | d
            let group = (a & 63) << 18 | (b & 63) << 12 | (c & 63) << 6 | (d & 63)
            output += [UInt8(truncatingIfNeeded: group >> 16), UInt8(truncatingIfNeeded: group >> 8), UInt8(truncatingIfNeeded: group)]
            index += 4
        }
        if remainder == 2 {
            let a = value(characters[index]), b = value(characters[index + 1])
            invalid |= a | b | -(b & 15)  // the last character's four low bits must be zero
            output.append(UInt8(truncatingIfNeeded: (a & 63) << 2 | (b & 63) >> 4))
        } else if remainder == 3 {
            let a = value(characters[index]), b = value(characters[index + 1]), c = value(characters[index + 2])
            invalid |= a | b | c | -(c & 3)  // the last character's two low bits must be zero
            let group = (a & 63) << 10 | (b & 63) << 4 | (c & 63) >> 2
            output += [UInt8(truncatingIfNeeded: group >> 8), UInt8(truncatingIfNeeded: group)]
        }
        guard invalid >= 0 else { throw MatrixCryptoError.invalidBase64 }
        return output
    }

    /// The alphabet's character for a 6-bit value, by arithmetic rather than a table: start from `A` and add the
    /// distance to the next class for each boundary the value is past (`(boundary - v) >> 8` is all ones past it).
    private static func character(_ v: Int) -> UInt8 {
        var c = v + 65                    // A–Z for 0–25
        c += ((25 - v) >> 8) & 6          // a–z for 26–51
        c -= ((51 - v) >> 8) & 75         // 0–9 for 52–61
        c -= ((61 - v) >> 8) & 15         // + for 62
        c += ((62 - v) >> 8) & 3          // / for 63
        return UInt8(truncatingIfNeeded: c)
    }

    /// The 6-bit value of a character, or -1 when it is not in the alphabet, computed with the same operations for
    /// every input. Each range test gives all ones (in range) or zero; at most one range matches, and adding its
    /// offset to -1 gives the value.
    private static func value(_ byte: UInt8) -> Int {
        let c = Int(byte)
        var result = -1
        result += inRange(c, 65, 90) & (c - 65 + 1)    // A–Z → 0–25
        result += inRange(c, 97, 122) & (c - 71 + 1)   // a–z → 26–51
        result += inRange(c, 48, 57) & (c + 4 + 1)     // 0–9 → 52–61
        result += inRange(c, 43, 43) & (62 + 1)        // +
        result += inRange(c, 47, 47) & (63 + 1)        // /
        return result
    }

    /// All ones when `low ≤ c ≤ high`, else zero, without a branch: both differences are negative only inside.
    private static func inRange(_ c: Int, _ low: Int, _ high: Int) -> Int {
        ((low - 1 - c) & (c - high - 1)) >> (Int.bitWidth - 1)
    }
}
