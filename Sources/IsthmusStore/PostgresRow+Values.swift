/// Typed reads of a ``PostgresRow``, from the text libpq hands over. No I/O.
extension PostgresRow {
    /// A column's text; nil when NULL.
    func string(_ column: Int32) -> String? {
        guard let bytes = bytes(column) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// An integer column (`t`/`f` for a boolean one read as 1/0); nil when NULL or not an integer.
    func int(_ column: Int32) -> Int? {
        guard let bytes = bytes(column), let first = bytes.first else { return nil }
        if columnType(column) == Self.boolOID { return first == UInt8(ascii: "t") ? 1 : 0 }
        var index = bytes.startIndex
        let negative = first == UInt8(ascii: "-")
        if negative || first == UInt8(ascii: "+") { index += 1 }
        guard index < bytes.endIndex else { return nil }
        var value = 0
        while index < bytes.endIndex {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            // Accumulate negatively so Int.min parses too.
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = times10.subtractingReportingOverflow(Int(digit))
            guard !overflow1 && !overflow2 else { return nil }
            value = next
            index += 1
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    /// A floating-point (or integer) column; nil when NULL or unparsable. Swift's `Double(_:)` parses in the C locale
    /// whatever `LC_NUMERIC` says (`strtod` would read "0.5" as 0 under a decimal-comma locale), and reads
    /// PostgreSQL's `Infinity`, `-Infinity` and `NaN` too.
    func double(_ column: Int32) -> Double? {
        guard let bytes = bytes(column) else { return nil }
        return Double(String(decoding: bytes, as: UTF8.self))
    }

    /// A bytea column's bytes (either output format: hex `\x…`, or the older escape format); a text column's UTF-8
    /// bytes. Empty when NULL.
    func blob(_ column: Int32) -> [UInt8] {
        guard let bytes = bytes(column) else { return [] }
        guard columnType(column) == PostgresParameters.byteaOID else { return Array(bytes) }
        return PostgresByteaText.decode(bytes) ?? Array(bytes)
    }

    /// Parses a text column into a typed id; nil when NULL or unparsable.
    func id<T: LosslessStringConvertible>(_ column: Int32, as type: T.Type = T.self) -> T? {
        string(column).flatMap(T.init)
    }

    /// A column as a typed value, by its PostgreSQL type: integers and booleans as `.integer`, floating-point and
    /// numeric as `.real`, bytea as `.blob`, everything else as `.text` (for `migrate-store`, which copies columns
    /// it does not know one by one).
    func value(_ column: Int32) -> SQLValue {
        guard !isNull(column) else { return .null }
        switch columnType(column) {
        case Self.boolOID, 20, 21, 23: return int(column).map { .integer(Int64($0)) } ?? .text(string(column) ?? "")
        case 700, 701, 1700: return double(column).map { .real($0) } ?? .null
        case PostgresParameters.byteaOID: return .blob(blob(column))
        default: return .text(string(column) ?? "")
        }
    }

    /// `BOOLOID` from PostgreSQL's catalog.
    private static let boolOID: UInt32 = 16
}

/// bytea's text output formats (PostgreSQL "Binary Data Types" 8.4). Pure; no I/O.
enum PostgresByteaText {
    /// Decodes hex (`\x48656c6c6f`) or escape format (`Hello\000\\`); nil when the text is neither.
    static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        if text.count >= 2 && text[0] == UInt8(ascii: "\\") && text[1] == UInt8(ascii: "x") {
            return decodeHex(text[2...])
        }
        return decodeEscape(text)
    }

    private static func decodeHex(_ digits: Slice<UnsafeBufferPointer<UInt8>>) -> [UInt8]? {
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = digits.startIndex
        while index < digits.endIndex {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func decodeEscape(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var index = 0
        while index < text.count {
            guard text[index] == UInt8(ascii: "\\") else {
                bytes.append(text[index])
                index += 1
                continue
            }
            if index + 1 < text.count && text[index + 1] == UInt8(ascii: "\\") {
                bytes.append(UInt8(ascii: "\\"))
                index += 2
            } else if index + 3 < text.count, let value = octal(text[(index + 1)...(index + 3)]) {
                bytes.append(value)
                index += 4
            } else {
                return nil
            }
        }
        return bytes
    }

    private static func octal(_ digits: Slice<UnsafeBufferPointer<UInt8>>) -> UInt8? {
        var value = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0") && digit <= UInt8(ascii: "7") else { return nil }
            value = value * 8 + Int(digit - UInt8(ascii: "0"))
        }
        return value <= 255 ? UInt8(value) : nil
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
