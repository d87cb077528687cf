import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The JSON log line: one object per record, `{"time":…,"level":…,"logger":…,"message":…}` followed by the
/// record's metadata as string fields sorted by key (a metadata key that is one of those four is written as
/// `metadata.<key>`). `time` is RFC 3339 UTC with microseconds. Pure.
enum LogJSON {
    static let reserved: Set<String> = ["time", "level", "logger", "message"]

    static func line(_ record: LogRecord) -> String {
        var line = "{\"time\":\"\(LogTimestamp.rfc3339(record.date, fractionDigits: 6))\",\"level\":\"\(record.level)\""
        line += ",\"logger\":" + quoted(record.label) + ",\"message\":" + quoted(record.message)
        for key in record.metadata.keys.sorted() {
            let name = reserved.contains(key) ? "metadata.\(key)" : key
            line += "," + quoted(name) + ":" + quoted(record.metadata[key] ?? "")
        }
        return line + "}"
    }

    /// A JSON string literal (RFC 8259 §7): quote, backslash and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// RFC 3339 timestamps in UTC for log lines. Pure.
enum LogTimestamp {
    /// `2026-11-29T12:00:00.123Z` with `fractionDigits` digits: 3 (milliseconds, rounded down) or 6 (microseconds,
    /// rounded to the nearest: a Double holds today's times to about a quarter of a microsecond).
    static func rfc3339(_ date: Date, fractionDigits: Int) -> String {
        let scale = fractionDigits == 6 ? 1_000_000 : 1000
        // Whole fractions first: subtracting seconds from the Double loses precision (….123 became ….122).
        let total = Int64((date.timeIntervalSince1970 * Double(scale)).rounded(fractionDigits == 6 ? .toNearestOrAwayFromZero : .down))
        let floorSeconds = total >= 0 ? total / Int64(scale) : (total - Int64(scale) + 1) / Int64(scale)
        var seconds = time_t(floorSeconds)
        let fraction = Int(total - floorSeconds * Int64(scale))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int, _ width: Int = 2) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(Int(parts.tm_year) + 1900, 4))-\(pad(Int(parts.tm_mon) + 1))-\(pad(Int(parts.tm_mday)))T"
            + "\(pad(Int(parts.tm_hour))):\(pad(Int(parts.tm_min))):\(pad(Int(parts.tm_sec))).\(pad(fraction, fractionDigits))Z"
    }
}
